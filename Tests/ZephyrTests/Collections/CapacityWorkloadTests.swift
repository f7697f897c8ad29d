import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The shape of `zephyr-bench collections`' trim workload, at a tenth of its size: a history
/// trimmed past capacity, marks on every device, removals of ids already trimmed; every
/// device keeps the newest writes.
struct CapacityWorkloadTests {
  @Test(arguments: World.allCases)
  func aTrimmedHistoryKeepsItsNewestWritesOnEveryDevice(world: World) {
    let key = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set(capacity: 2_000))
    let harness = Harness(world: world)
    let devices = ["A", "B", "C"].map { harness.device($0) }
    for device in devices { _ = device.coordinator[key] }
    func converge() {
      for _ in 0..<4 {
        harness.cloud.upload()
        harness.cloud.download()
        for device in devices {
          device.coordinator.sync()
          device.settle()
        }
      }
    }
    var batchOf: [UInt32: Int] = [:]
    for batch in 0..<25 {
      let ids = (0..<100).map { UInt32(batch * 1000 + ($0 * 37) % 1000) }
      for id in ids { batchOf[id] = batch }
      devices[0].coordinator.insert(contentsOf: ids, into: key)
      devices[0].settle()
    }
    converge()
    for (index, device) in devices.enumerated() {
      for mark in 0..<5 { device.coordinator.insert(UInt32(900_000 + index * 100 + mark), into: key) }
      device.settle()
    }
    devices[0].coordinator.remove(contentsOf: (0..<25).map { UInt32($0 * 37 % 1000) }, from: key)
    devices[0].coordinator.waitForPendingLocalEdits()
    devices[1].coordinator.remove(contentsOf: (0..<25).map { UInt32(1000 + $0 * 37 % 1000) }, from: key)
    devices[1].coordinator.waitForPendingLocalEdits()
    converge()
    let final = Set(devices[0].coordinator[key])
    var kept: [Int: Int] = [:]
    for id in final { kept[batchOf[id] ?? -1, default: 0] += 1 }
    for device in devices { #expect(Set(device.coordinator[key]) == final) }
    let oldest = final.compactMap { batchOf[$0] }.min() ?? 0
    #expect(kept[-1] == 15, "the marks made on every device")
    #expect(final.count == 2_000)
    #expect(
      kept[oldest] ?? 0 <= 100 && final.compactMap { batchOf[$0] }.filter { $0 > oldest }.count == (24 - oldest) * 100)
  }

  /// New installs whose first edits were made before their initial download: those edits
  /// are merged as one write made at the download (no other device saw them before), so a
  /// capacity orders them as one write. Nothing is lost and every device agrees.
  @Test func newInstallsEditsBeforeTheirInitialDownloadCountAsOneWrite() {
    let key = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set(capacity: 100))
    let harness = Harness()
    let devices = ["A", "B"].map { harness.device($0, initiallyDownloaded: false) }
    for device in devices { _ = device.coordinator[key] }
    for batch in 0..<15 {
      devices[0].coordinator.insert(contentsOf: (0..<10).map { UInt32(batch * 100 + $0) }, into: key)
      devices[0].settle()
    }
    #expect(devices[0].coordinator[key].count == 100)
    for _ in 0..<3 { harness.round() }
    devices[1].coordinator.insert(contentsOf: [90_000, 90_001], into: key)
    devices[1].settle()
    for _ in 0..<3 { harness.round() }
    let agreed = Set(devices[0].coordinator[key])
    #expect(Set(devices[1].coordinator[key]) == agreed)
    #expect(agreed.count == 100)
    #expect(agreed.isSuperset(of: [90_000, 90_001]), "marks made after the download are the newest")
  }
}

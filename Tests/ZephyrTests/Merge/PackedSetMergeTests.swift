import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A `PackedSet` key merged by `.set`: no read mark is lost when devices mark articles
/// read at once, removals stick, and the record stays near the size of the ids.
struct PackedSetMergeTests {
  private static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)

  private func ids(_ device: TestDevice) -> Set<UInt32> {
    Set(device.coordinator[Self.read])
  }

  @Test func concurrentMarksOnThreeDevicesAreAllKeptAndRemovalsStick() {
    let harness = Harness()
    let devices = ["A", "B", "C"].map { harness.device($0) }
    devices[0].coordinator[Self.read] = [1, 2, 3]
    devices[0].settle()
    for _ in 0..<2 { harness.round() }
    for (device, id) in zip(devices, [UInt32(10), 20, 30]) {
      var marks = device.coordinator[Self.read]
      marks.insert(id)
      device.coordinator[Self.read] = marks
      device.settle()
    }
    for _ in 0..<3 { harness.round() }
    for device in devices { #expect(ids(device) == [1, 2, 3, 10, 20, 30], "\(device.name)") }
    var trimmed = devices[2].coordinator[Self.read]
    trimmed.remove(1)
    trimmed.remove(20)
    devices[2].coordinator[Self.read] = trimmed
    devices[2].settle()
    for _ in 0..<3 { harness.round() }
    for device in devices { #expect(ids(device) == [2, 3, 10, 30], "\(device.name)") }
    guard case .replica(let record) = RemoteState(storeValue: harness.cloud.serverValues["read"]) else {
      Issue.record("no state record")
      return
    }
    #expect(record.state.kind == .packedSet)
  }

  /// 25,000 random 32-bit ids marked in batches on three devices, concurrently: the record
  /// with its merge state stays within 110 KB, near the ids' entropy.
  @Test func twentyFiveThousandIdsFitWithTheirMergeState() {
    let harness = Harness()
    let devices = ["A", "B", "C"].map { harness.device($0) }
    var random = SeededGenerator(seed: 25_000)
    var all = Set<UInt32>()
    while all.count < 25_000 { all.insert(UInt32.random(in: 0...UInt32.max, using: &random)) }
    let batches = Array(all).chunked(into: 2_500)
    for (index, batch) in batches.enumerated() {
      let device = devices[index % 3]
      var marks = device.coordinator[Self.read]
      marks.formUnion(PackedSet(batch))
      device.coordinator[Self.read] = marks
      device.settle()
      if index % 3 == 2 { harness.round() }
    }
    for _ in 0..<3 { harness.round() }
    for device in devices { #expect(ids(device) == all, "\(device.name)") }
    let record = harness.cloud.serverValues["read"]
    let bytes = record.map { PropertyListValue.storeSize(key: "read", value: $0) } ?? 0
    // The entropy of 25,000 ids among 2^32: log2 C(2^32, 25,000) bits.
    var bits = 0.0
    for index in 0..<25_000 {
      let chosen = Double(index)
      bits += log2((4_294_967_296.0 - chosen) / (chosen + 1))
    }
    let entropy = bits / 8
    print("PackedSetMergeTests: 25,000 ids, record \(bytes) bytes, entropy \(Int(entropy)) bytes")
    #expect(bytes <= 110_000)
    #expect(Double(bytes) < entropy * 1.25)
  }

  /// A plain array under a packed key (an app's own old format) is refused by name and
  /// left alone; the local value is untouched.
  @Test func aForeignPlainArrayUnderAPackedKeyIsRefused() {
    let harness = Harness()
    let a = harness.device("A")
    a.coordinator[Self.read] = [7]
    a.settle()
    harness.cloud.upload()
    harness.cloud.setServerValue(.array([.integer(1), .integer(2)]), forKey: "read")
    harness.cloud.download(to: "A", notify: true)
    a.coordinator.sync(keys: ["read"])
    #expect(ids(a) == [7])
    #expect(
      a.coordinator.status.refusedKeys["read"] == .strategyCannotMerge(strategy: "packed", value: "array in the store"))
    #expect(harness.cloud.serverValues["read"] == .array([.integer(1), .integer(2)]))
  }
}

extension PackedSetMergeTests {
  /// `insert(_:into:)`, `insert(contentsOf:into:)`, `remove(_:from:)` and
  /// `remove(contentsOf:from:)` edit a set key element by element, each one push, and
  /// the edits of two devices made at once all survive.
  @Test func elementEditsOnTwoDevicesAllSurvive() {
    let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)
    let harness = Harness()
    let (a, b) = (harness.device("A"), harness.device("B"))
    a.coordinator.insert(contentsOf: [1, 2, 3], into: Self.read)
    a.coordinator.insert("home", into: favorites)
    a.settle()
    for _ in 0..<2 { harness.round() }
    let writes = a.store.statistics.writes
    a.coordinator.insert(4, into: Self.read)
    a.settle()
    #expect(a.store.statistics.writes == writes + 1, "one element, one push")
    b.coordinator.remove(2, from: Self.read)
    b.coordinator.insert(contentsOf: ["work", "gym"], into: favorites)
    b.coordinator.remove(contentsOf: [3], from: Self.read)
    a.coordinator.remove("home", from: favorites)
    a.settle()
    b.settle()
    for _ in 0..<3 { harness.round() }
    for device in [a, b] {
      #expect(ids(device) == [1, 4], "\(device.name)")
      #expect(Set(device.coordinator[favorites]) == ["work", "gym"], "\(device.name)")
    }
    #expect(a.coordinator[Self.read].contains(4))
  }

  /// The facade's element edits forward to the shared coordinator.
  @Test func theFacadeEditsElementsOfTheSharedCoordinator() {
    let harness = Harness()
    let a = harness.device("A")
    SharedFacade.using(a.coordinator) {
      Zephyr.insert(7, into: Self.read)
      Zephyr.insert(contentsOf: [8, 9], into: Self.read)
      Zephyr.remove(8, from: Self.read)
      Zephyr.remove(contentsOf: [9], from: Self.read)
    }
    a.settle()
    #expect(ids(a) == [7])
  }
}

extension Array {
  fileprivate func chunked(into size: Int) -> [[Element]] {
    stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A `PackedSet` key through `UserDefaults`, the store and another device: one `Data`
/// value everywhere. (Merged as a last-writer-wins value here; `.set` merging of packed
/// sets comes with the merge layer.)
struct PackedSetSyncTests {
  static let read = SyncKey<PackedSet<UInt32>>("read", default: [])
  static let signed = SyncKey<PackedSet<Int64>>("signed", default: [])

  @Test func aPackedSetIsOneDataValueLocallyAndInTheStore() throws {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: ["read"])
    var generator = SeededGenerator(seed: 4)
    let ids = PackedSet((0..<2_000).map { _ in UInt32.random(in: 0...UInt32.max, using: &generator) })
    a.coordinator[Self.read] = ids
    a.settle()
    harness.cloud.deliver()

    guard case .data(let local)? = a.value("read") else {
      Issue.record("stored locally as \(a.value("read")?.logDescription ?? "nothing")")
      return
    }
    #expect(PackedIntegers.decode(local)?.count == ids.count)
    #expect(a.record("read")?.content == .value(.data(local)))
    #expect(b.coordinator[Self.read] == ids)
    #expect(b.defaults.data(forKey: "read") == local, "plain UserDefaults reads the same bytes")
  }

  @Test func negativeIdsCrossDevicesInOrder() {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: ["signed"])
    a.coordinator[Self.signed] = [Int64.min, -7, 0, Int64.max]
    a.settle()
    harness.cloud.deliver()
    #expect(Array(b.coordinator[Self.signed]) == [Int64.min, -7, 0, Int64.max])
  }

  @Test func aMalformedLocalBlobReadsAsTheDefaultAndStaysStored() {
    let harness = Harness()
    let a = harness.device("A")
    // A hand-packed blob of 4-byte ids, as an app wrote before it used PackedSet.
    let handPacked = Data([0, 0, 0, 1, 0, 0, 0, 2])
    a.defaults.set(handPacked, forKey: "read")
    #expect(a.coordinator[Self.read].isEmpty)
    a.settle()
    #expect(a.defaults.data(forKey: "read") == handPacked)
  }
}

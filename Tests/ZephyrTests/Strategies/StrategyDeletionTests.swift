import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 32, item 4: a deleted strategy key's record left the store only never: apps with
/// one key per account reached the store's 1,024-key limit. Now its record, dated when
/// its state was deleted, is collected after ``SyncConfiguration/tombstoneLifetime`` like
/// a last-writer-wins tombstone, with the same guarantee: no device that saw the delete
/// brings the value back, across relaunches too.
struct StrategyDeletionTests {
  static let strategies: [MergeStrategy] = [.set, .union, .dictionary, .max]

  static func value(for strategy: MergeStrategy) -> PropertyListValue {
    switch strategy {
    case .dictionary: .dictionary(["a": .integer(1)])
    case .max: .integer(5)
    default: .array([.string("a"), .string("b")])
    }
  }

  @Test(arguments: strategies)
  func aDeletedStrategyKeysRecordIsCollectedAfterTheLifetime(strategy: MergeStrategy) {
    let harness = Harness()
    let clock = Locked(Date(timeIntervalSince1970: 1_000_000))
    let now: @Sendable () -> Date = { clock.withLock { $0 } }
    let devices = harness.devices(["A", "B", "C"], merging: "account.1", by: strategy).map { device in
      device.coordinator.configuration.clock = now
      return device
    }
    let (a, b) = (devices[0], devices[1])
    a.set(Self.value(for: strategy), "account.1")
    for _ in 0..<2 { harness.round() }
    #expect(b.value("account.1") == Self.value(for: strategy))

    b.remove("account.1")
    for _ in 0..<3 { harness.round() }
    #expect(harness.values(of: "account.1").values.allSatisfy { $0 == nil })
    clock.withLock { $0 += 29 * 24 * 60 * 60 }
    harness.round()
    #expect(harness.cloud.serverValues["account.1"] != nil, "29 days: the deleted state stays")

    clock.withLock { $0 += 2 * 24 * 60 * 60 }
    harness.round()
    #expect(harness.cloud.serverValues["account.1"] == nil, "31 days: collected")
    #expect(devices.contains { $0.debugLines.contains { $0.hasPrefix("collect tombstone account.1") } })

    // Relaunched, and after more rounds, no device that saw the delete brings it back.
    for device in devices { device.restart() }
    let writes = devices.map { $0.store.statistics.writes }
    for _ in 0..<3 { harness.round() }
    #expect(harness.cloud.serverValues["account.1"] == nil)
    #expect(harness.values(of: "account.1").values.allSatisfy { $0 == nil })
    #expect(devices.map { $0.store.statistics.writes } == writes, "quiet rounds write nothing")
    #expect(a.coordinator.status.keyCount == 0)
  }

  /// A key written again after its record was collected syncs as a new value.
  @Test func aKeyWrittenAgainAfterCollectionSyncs() {
    let harness = Harness()
    let clock = Locked(Date(timeIntervalSince1970: 1_000_000))
    let now: @Sendable () -> Date = { clock.withLock { $0 } }
    let devices = harness.devices(["A", "B"], merging: "tags", by: .set).map { device in
      device.coordinator.configuration.clock = now
      return device
    }
    devices[0].set(.array([.string("x")]), "tags")
    harness.round()
    devices[0].remove("tags")
    for _ in 0..<2 { harness.round() }
    clock.withLock { $0 += 31 * 24 * 60 * 60 }
    for _ in 0..<2 { harness.round() }
    #expect(harness.cloud.serverValues["tags"] == nil)
    devices[1].set(.array([.string("y")]), "tags")
    for _ in 0..<3 { harness.round() }
    #expect(harness.values(of: "tags") == ["A": .array([.string("y")]), "B": .array([.string("y")])])
  }
}

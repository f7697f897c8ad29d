import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The store's limits, at and around each boundary, and the diagnostics that explain them.
struct BudgetTests {
  /// A key of exactly `bytes` UTF-8 bytes, made of two-byte characters where it can be.
  static func key(bytes: Int) -> String {
    String(repeating: "é", count: bytes / 2) + (bytes.isMultiple(of: 2) ? "" : "k")
  }

  @Test(arguments: [63, 64, 65])
  func keyLengthBoundary(bytes: Int) {
    let harness = Harness()
    let key = Self.key(bytes: bytes)
    #expect(key.utf8.count == bytes)
    let a = harness.device("A", monitored: [key])
    a.set(.integer(1), key)
    a.coordinator.sync()
    if bytes <= 64 {
      #expect(a.store.value(forKey: key) != nil)
      #expect(a.coordinator.status.refusedKeys.isEmpty)
    } else {
      #expect(a.store.cachedValues.isEmpty)
      #expect(a.coordinator.status.refusedKeys[key] == .keyTooLong(bytes: bytes, limit: 64))
    }
    #expect(a.store.statistics.keyLengthExceptions == 0)
  }

  @Test(arguments: [1_023, 1_024, 1_025])
  func keyCountBoundary(keys count: Int) {
    let harness = Harness()
    let a = harness.device("A")
    for index in 0..<count { a.set(.bool(true), "k\(index)") }
    a.coordinator.sync()
    let status = a.coordinator.status
    #expect(a.store.cachedValues.count == min(count, 1_024))
    #expect(status.keyCount == min(count, 1_024))
    #expect(status.refusedKeys.count == max(0, count - 1_024))
    if count > 1_024 {
      #expect(status.refusedKeys.values.allSatisfy { $0 == .tooManyKeys(limit: 1_024) })
    }
    #expect(a.store.statistics.quotaViolations == 0, "pre-flight refused it before the store had to")
    #expect((0..<count).allSatisfy { a.value("k\($0)") == .bool(true) }, "every local value stays")
  }

  /// The size of A's record for `key` holding `bytes` bytes of data.
  static func recordSize(key: String, dataBytes: Int) -> Int {
    let record = SyncRecord(generation: 1, origin: "A", content: .value(.data(Data(count: dataBytes))))
    return PropertyListValue.storeSize(key: key, value: record.encoded)
  }

  /// Data sizes for two keys whose records fill the store to `limit + offset` bytes.
  static func fill(to total: Int) -> (Int, Int)? {
    let first = 600_000
    let remaining = total - recordSize(key: "big1", dataBytes: first)
    let overhead = recordSize(key: "big2", dataBytes: 100_000) - 100_000
    for second in (remaining - overhead - 8)...(remaining - overhead + 8)
    where recordSize(key: "big2", dataBytes: second) == remaining {
      return (first, second)
    }
    return nil
  }

  @Test(arguments: [-1, 0, 1])
  func totalBytesBoundary(offset: Int) throws {
    let harness = Harness()
    let a = harness.device("A")
    let limit = StoreLimits.iCloud.maximumTotalBytes
    let sizes = try #require(Self.fill(to: limit + offset))
    a.set(.data(Data(count: sizes.0)), "big1")
    a.set(.data(Data(count: sizes.1)), "big2")
    a.coordinator.sync()
    let status = a.coordinator.status
    if offset <= 0 {
      #expect(a.store.usedBytes == limit + offset, "the estimate is exact")
      #expect(status.estimatedBytes == limit + offset)
      #expect(status.refusedKeys.isEmpty)
    } else {
      let needed = Self.recordSize(key: "big2", dataBytes: sizes.1)
      #expect(status.refusedKeys["big2"] == .overQuota(needed: needed, available: needed - 1))
      #expect(a.store.value(forKey: "big2") == nil)
      #expect(a.value("big2") == .data(Data(count: sizes.1)))
    }
    #expect(a.store.statistics.quotaViolations == 0)
  }

  @Test func growingValueStopsAtTheLimitAndKeepsItsLocalValue() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["blob"])
    var size = 100_000
    var lastStored = 0
    while size < 1_200_000 {
      a.set(.data(Data(repeating: 7, count: size)), "blob")
      a.coordinator.sync()
      if case .record(let record) = RemoteState(storeValue: a.store.value(forKey: "blob")),
        case .value(.data(let data)) = record.content, data.count == size
      {
        lastStored = size
      } else {
        break
      }
      size += 100_000
    }
    #expect(lastStored == 1_000_000)
    guard case .overQuota(let needed, let available)? = a.coordinator.status.refusedKeys["blob"] else {
      Issue.record("status does not explain the refusal")
      return
    }
    #expect(needed > available)
    #expect(needed == Self.recordSize(key: "blob", dataBytes: size) + 0 * available)
    #expect(a.value("blob") == .data(Data(repeating: 7, count: size)))
    #expect(a.warnings.contains { $0.contains("refused key blob: needs \(needed) bytes") })
    a.coordinator.sync()
    a.coordinator.sync()
    #expect(a.warnings.count { $0.hasPrefix("refused key blob") } == 1, "logged once while it stays refused")
  }

  @Test func thresholdCrossingIsLoggedOncePerCrossing() {
    let harness = Harness()
    let a = harness.device("A")
    func thresholdWarnings() -> Int { a.warnings.count { $0.hasPrefix("the store is at") } }

    for index in 0..<800 { a.set(.bool(true), "k\(index)") }
    a.coordinator.sync()
    #expect(thresholdWarnings() == 0, "800 of 1,024 keys is 78%")
    for index in 800..<900 { a.set(.bool(true), "k\(index)") }
    a.coordinator.sync()
    #expect(thresholdWarnings() == 1)
    a.set(.bool(true), "k900")
    a.coordinator.sync()
    a.coordinator.sync()
    #expect(thresholdWarnings() == 1, "still above: no new warning")

    // Tombstones keep their keys until collected; collect them to drop below.
    let clock = Locked(Date())
    a.coordinator.configuration.clock = { clock.withLock { $0 } }
    for index in 0..<200 { a.remove("k\(index)") }
    a.coordinator.sync()
    clock.withLock { $0 += 31 * 24 * 60 * 60 }
    a.coordinator.sync()
    #expect(a.coordinator.status.keyCount == 701)
    for index in 0..<200 { a.set(.bool(false), "k\(index)") }
    a.coordinator.sync()
    #expect(thresholdWarnings() == 2, "crossing again warns again")
  }

  @Test func tombstonesAreCollectedAfterTheirLifetime() {
    let harness = Harness()
    let clock = Locked(Date(timeIntervalSince1970: 1_000_000))
    let now: @Sendable () -> Date = { clock.withLock { $0 } }
    let a = harness.device("A", monitored: ["theme"]) { $0.clock = now }
    let b = harness.device("B", monitored: ["theme"]) { $0.clock = now }
    a.set(.string("dusk"), "theme")
    harness.round()
    a.remove("theme")
    a.coordinator.sync()
    harness.round()
    #expect(b.value("theme") == nil)

    clock.withLock { $0 += 29 * 24 * 60 * 60 }
    harness.round()
    #expect(a.store.value(forKey: "theme") != nil, "29 days: the tombstone stays")

    clock.withLock { $0 += 2 * 24 * 60 * 60 }
    a.coordinator.sync()
    #expect(a.store.value(forKey: "theme") == nil, "31 days: collected")
    #expect(a.coordinator.status.keyCount == 0)
    #expect(a.debugLines.contains { $0.hasPrefix("collect tombstone theme") })
    harness.round()
    harness.round()
    #expect(harness.cloud.serverValues["theme"] == nil, "no device that saw the delete pushes the value again")
    #expect(harness.values(of: "theme").values.allSatisfy { $0 == nil })
  }

  @Test func tombstonesAreKeptForeverWithoutALifetime() {
    let harness = Harness()
    let clock = Locked(Date(timeIntervalSince1970: 1_000_000))
    let a = harness.device("A") { configuration in
      configuration.tombstoneLifetime = nil
      configuration.clock = { clock.withLock { $0 } }
    }
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    a.remove("theme")
    a.coordinator.sync()
    clock.withLock { $0 += 10 * 365 * 24 * 60 * 60 }
    a.coordinator.sync()
    #expect(a.record("theme").map { if case .deleted = $0.content { true } else { false } } == true)
  }

  @Test func overQuotaDeviceRecoversOnceSpaceIsFreed() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["blob", "note"])
    let b = harness.device("B", monitored: ["blob", "note"])
    b.set(.data(Data(count: 1_000_000)), "blob")
    b.coordinator.sync()
    harness.round()
    #expect(a.value("blob") != nil)

    a.set(.data(Data(count: 60_000)), "note")
    a.coordinator.sync()
    guard case .overQuota? = a.coordinator.status.refusedKeys["note"] else {
      Issue.record("note was not refused")
      return
    }
    b.remove("blob")
    b.coordinator.sync()
    harness.round()
    #expect(a.coordinator.status.refusedKeys["note"] == nil)
    #expect(b.value("note") == .data(Data(count: 60_000)))
    #expect(a.store.statistics.quotaViolations == 0)
  }

  @Test func statusAfterEveryEventKind() {
    let harness = Harness()
    let clock = Locked(Date(timeIntervalSince1970: 5_000))
    let a = harness.device("A", monitored: ["theme"]) { $0.clock = { clock.withLock { $0 } } }
    #expect(a.coordinator.status.lastEvent == nil)

    let kinds: [(ExternalChange, (SyncStatus) -> Bool)] = [
      (ExternalChange(reason: .serverChange, keys: ["theme", "x"]), { $0.lastEvent?.keyCount == 2 }),
      (ExternalChange(reason: .initialSync, keys: nil), { $0.lastEvent?.keyCount == nil }),
      (ExternalChange(reason: .quotaViolation, keys: nil), { $0.lastQuotaViolation == clock.withLock { $0 } }),
      (ExternalChange(reason: .accountChange, keys: []), { $0.lastAccountChange == clock.withLock { $0 } }),
    ]
    for (change, check) in kinds {
      clock.withLock { $0 += 60 }
      harness.cloud.post(change, to: "A")
      let status = a.coordinator.status
      #expect(status.lastEvent?.reason == change.reason)
      #expect(status.lastEvent?.date == clock.withLock { $0 })
      #expect(check(status), "\(change.reason)")
    }
  }

  @Test func statusDescribesBudgetAndRefusals() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let longKey = String(repeating: "x", count: 70)
    a.set(.string("dusk"), "theme")
    a.set(.data(Data(count: 5_000)), "avatar")
    a.set(.integer(1), longKey)
    a.coordinator.sync()
    let status = a.coordinator.status
    #expect(status.largestKeys.first?.key == "avatar")
    #expect(status.keyCount == 2)
    #expect(status.estimatedBytes == a.store.usedBytes)
    #expect(status.overheadBytes > 0 && status.overheadBytes <= 2 * 32)
    let table = status.description
    #expect(table.contains("store bytes           \(status.estimatedBytes) / 1048576"))
    #expect(table.contains("store keys            2 / 1024"))
    #expect(table.contains("\(longKey): key is 70 bytes > 64"))
    #expect(table.contains("monitored keys        theme"))
  }

  @Test func estimateMatchesPropertyListSerializationOnAMixedStore() {
    var generator = SeededGenerator(seed: 42)
    var exact = 0
    for index in 0..<1_000 {
      let value = RandomValues.value(using: &generator)
      let record = SyncRecord(generation: UInt64(index + 1), origin: "k3f9qa", content: .value(value)).encoded
      let actual = SimulatedCloud.binaryPlistSize(of: record)
      let estimate = record.estimatedBinaryPlistSize
      #expect(estimate >= actual, "the estimate never undercounts")
      if estimate == actual { exact += 1 }
    }
    #if !canImport(Darwin)
      #expect(exact == 1_000, "swift-corelibs-foundation writes exactly what the estimate counts")
    #endif
  }
}

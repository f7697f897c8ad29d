import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Keys the store cannot hold and values Zephyr did not write: refused or read safely,
/// never a crash, never a lost local value.
struct LimitsAndBadInputTests {
  @Test func overLongKeyIsRefusedAndOtherKeysStillSync() {
    let harness = Harness()
    let longKey = "com.example." + String(repeating: "é", count: 27)  // 12 + 54 = 66 bytes
    let fitting = "com.example." + String(repeating: "é", count: 26)  // 64 bytes
    let a = harness.device("A", monitored: [longKey, fitting, "theme"])
    a.set(.string("too long"), longKey)
    a.set(.string("fits"), fitting)
    a.set(.string("dusk"), "theme")

    a.coordinator.sync()
    a.coordinator.sync(keys: [longKey, "theme"])
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: [longKey]), to: "A")
    harness.cloud.upload()

    #expect(a.coordinator.status.refusedKeys[longKey] == .keyTooLong(bytes: 66, limit: 64))
    #expect(a.coordinator.status.refusedKeys[fitting] == nil)
    #expect(a.store.statistics.keyLengthExceptions == 0, "Zephyr never sends a key the store would raise on")
    #expect(Set(harness.cloud.serverValues.keys) == [fitting, "theme"])
    #expect(a.value(longKey) == .string("too long"), "the local value is untouched")
    #expect(a.warnings.contains("refused key \(longKey): key is 66 bytes > 64"))
    #expect(a.warnings.count(where: { $0.hasPrefix("refused key \(longKey)") }) == 1, "logged once, not per sync")
  }

  @Test func foreignValueIsPulledAsANewerWrite() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    let generation = a.coordinator.engine.state.withLock { $0.ledger["theme"]?.generation }

    harness.cloud.setServerValue(.string("from Zephyr 4"), forKey: "theme")
    harness.cloud.download(to: "A")
    #expect(a.value("theme") == .string("from Zephyr 4"))
    #expect(a.coordinator.engine.state.withLock { $0.ledger["theme"]?.generation } == generation.map { $0 + 1 })

    // A device with no history takes it too, and nobody rewrites it while nothing changes.
    let b = harness.device("B", monitored: ["theme"])
    harness.cloud.download(to: "B", notify: false)
    b.coordinator.sync()
    #expect(b.value("theme") == .string("from Zephyr 4"))
    harness.round()
    #expect(harness.cloud.serverValues["theme"] == .string("from Zephyr 4"))
  }

  @Test func legacySyncStampIsRemovedAndNeverSynced() {
    let harness = Harness()
    let a = harness.device("A")
    harness.cloud.setServerValue(.date(Date(timeIntervalSince1970: 100)), forKey: "ZephyrSyncKey")
    harness.cloud.download(to: "A", notify: false)
    a.set(.date(Date(timeIntervalSince1970: 50)), "ZephyrSyncKey")
    a.set(.string("dusk"), "theme")

    a.coordinator.sync()
    harness.cloud.upload()
    #expect(harness.cloud.serverValues["ZephyrSyncKey"] == nil)
    #expect(a.value("ZephyrSyncKey") == nil)
    #expect(Set(harness.cloud.serverValues.keys) == ["theme"])
  }

  /// A full `sync()` finds Zephyr 4's stamp in the domain and store snapshots it reads
  /// anyway: no `object(forKey:)` of its own (on Linux such a read costs a copy of the
  /// whole domain, a tenth of a steady sync). A stamp written later is still removed.
  @Test func aFullSyncLooksForTheLegacyStampInItsSnapshots() {
    let harness = Harness()
    let (coordinator, defaults, suiteName) = InboundReadTests.countingDevice(harness)
    defer { defaults.removePersistentDomain(forName: suiteName) }
    coordinator.sync()
    let before = defaults.reads(of: KeyPolicy.legacySyncKey)
    coordinator.sync()
    #expect(defaults.reads(of: KeyPolicy.legacySyncKey) == before, "a steady sync read the stamp on its own")

    defaults.set(Date(timeIntervalSince1970: 50), forKey: KeyPolicy.legacySyncKey)
    harness.cloud.setServerValue(.date(Date(timeIntervalSince1970: 100)), forKey: KeyPolicy.legacySyncKey)
    harness.cloud.download(to: "B", notify: false)
    coordinator.sync()
    harness.cloud.upload()
    #expect(defaults.persistentDomain(forName: suiteName)?[KeyPolicy.legacySyncKey] == nil)
    #expect(harness.cloud.serverValues[KeyPolicy.legacySyncKey] == nil)
  }

  @Test func zephyrFiveMetadataIsNeverSyncedAsUserData() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["Zephyr.v5.versions"])
    harness.cloud.setServerValue(.dictionary(["theme": .integer(3)]), forKey: "Zephyr.v5.versions")
    harness.cloud.download(to: "A")
    a.coordinator.sync()
    #expect(a.value("Zephyr.v5.versions") == nil)
    #expect(a.coordinator.status.refusedKeys["Zephyr.v5.versions"] == .bookkeepingKey)
  }

  static let badRecords: [(String, PropertyListValue)] = [
    ("negative generation", .array([.string("z1"), .integer(-4), .string("x"), .string("v")])),
    ("zero generation", .array([.string("z1"), .integer(0), .string("x"), .string("v")])),
    ("generation above 2^53", .array([.string("z1"), .integer(1 << 53 + 1), .string("x"), .string("v")])),
    ("absurd generation", .array([.string("z1"), .integer(Int64.max), .string("x"), .string("v")])),
    ("string generation", .array([.string("z1"), .string("7"), .string("x"), .string("v")])),
    ("truncated", .array([.string("z1"), .integer(4)])),
    ("tombstone without date", .array([.string("z1d"), .integer(4), .string("x"), .string("v")])),
    ("origin not a string", .array([.string("z1"), .integer(4), .integer(9), .string("v")])),
  ]

  @Test(arguments: badRecords.map(\.0))
  func malformedRecordNeverDeletesLocalData(_ name: String) throws {
    let bad = try #require(Self.badRecords.first { $0.0 == name }?.1)
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()

    harness.cloud.setServerValue(bad, forKey: "theme")
    harness.cloud.download(to: "A")
    #expect(a.value("theme") == .string("dusk"))
    guard case .malformedRecord? = a.coordinator.status.refusedKeys["theme"] else {
      Issue.record("status does not name the malformed record")
      return
    }
    a.coordinator.sync()
    harness.cloud.upload()
    #expect(a.value("theme") == .string("dusk"))
    #expect(a.record("theme")?.content == .value(.string("dusk")), "the store is repaired")
    a.coordinator.sync()
    #expect(a.coordinator.status.refusedKeys["theme"] == nil, "and the key leaves the refused list")
  }

  @Test func newerRecordFormatIsLeftAlone() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    let future = PropertyListValue.array([.string("z9"), .integer(9), .string("x"), .dictionary([:])])
    harness.cloud.setServerValue(future, forKey: "theme")
    harness.cloud.download(to: "A")
    a.set(.string("dawn"), "theme")
    a.coordinator.sync()
    harness.cloud.upload()
    #expect(harness.cloud.serverValues["theme"] == future)
    #expect(a.value("theme") == .string("dawn"))
    #expect(a.coordinator.status.refusedKeys["theme"] == .unsupportedFormat("z9"))
  }
}

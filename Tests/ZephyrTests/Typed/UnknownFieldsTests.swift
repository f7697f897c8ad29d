import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A newer app version adds a field to a `Codable` struct; a device still on the older
/// version, which does not know the field, sets the struct: the field it does not know is
/// kept, on every device, whether the key merges per field or the last writer wins.
struct UnknownFieldsTests {
  /// The older version's struct.
  struct CardV1: Codable, SyncValue, KeyedSyncValue, Equatable {
    var columns = 2
    var badge: String?
  }

  /// The newer version's: one more field.
  struct CardV2: Codable, SyncValue, KeyedSyncValue, Equatable {
    var columns = 2
    var badge: String?
    var theme = "light"
  }

  /// The newer version writes a card with a theme; the older one receives it, and reads
  /// the fields it knows.
  private static func newerVersionWritesACard(
    _ harness: Harness, newer: TestDevice, older: TestDevice, v1: SyncKey<CardV1>, v2: SyncKey<CardV2>
  ) {
    _ = older.coordinator[v1]
    older.settle()
    newer.coordinator[v2] = CardV2(columns: 3, badge: "new", theme: "dark")
    newer.coordinator.waitForPendingLocalEdits()
    harness.cloud.deliver()
    older.settle()
    #expect(older.coordinator[v1] == CardV1(columns: 3, badge: "new"))
  }

  @Test(arguments: [false, true])
  func aFieldTheOlderVersionDoesNotKnowIsKept(mergedPerField: Bool) {
    let harness = Harness()
    let newer = harness.device("A", monitored: [])
    let older = harness.device("B", monitored: [])
    let v2 = SyncKey<CardV2>("card", default: CardV2(), merge: mergedPerField ? .dictionary : .lastWriterWins)
    let v1 = SyncKey<CardV1>("card", default: CardV1(), merge: mergedPerField ? .dictionary : .lastWriterWins)
    Self.newerVersionWritesACard(harness, newer: newer, older: older, v1: v1, v2: v2)

    // The older version changes a field it knows, and clears another it knows.
    older.coordinator[v1] = CardV1(columns: 4, badge: nil)
    older.coordinator.waitForPendingLocalEdits()
    harness.cloud.deliver()
    newer.settle()
    #expect(newer.coordinator[v2] == CardV2(columns: 4, badge: nil, theme: "dark"), "the newer field is kept")
    #expect(older.value("card")?.dictionaryEntries?["theme"] == .string("dark"), "in the older device's defaults too")
  }

  /// A `[String: …]` dictionary has no unknown fields: a removed entry stays removed.
  @Test func aDictionaryEntryRemovedStaysRemoved() {
    let harness = Harness()
    let a = harness.device("A", monitored: [])
    let key = SyncKey<[String: Int]>("scores", default: [:])
    a.coordinator[key] = ["ann": 3, "bo": 5]
    a.coordinator[key] = ["ann": 3]
    #expect(a.coordinator[key] == ["ann": 3])
  }

  /// A set made before the first unlock, held until protected data is available, keeps
  /// the fields the value holds then.
  @Test func aSetHeldUntilProtectedDataKeepsTheNewerField() {
    let harness = Harness()
    let newer = harness.device("A", monitored: [])
    let older = harness.lockableDevice("B", monitored: [])
    let v2 = SyncKey<CardV2>("card", default: CardV2())
    let v1 = SyncKey<CardV1>("card", default: CardV1())
    Self.newerVersionWritesACard(harness, newer: newer, older: older, v1: v1, v2: v2)

    older.faithful.isProtectedDataAvailable = false
    older.coordinator[v1] = CardV1(columns: 4, badge: "new")
    older.faithful.isProtectedDataAvailable = true
    older.settle()
    harness.cloud.deliver()
    newer.settle()
    #expect(older.value("card")?.dictionaryEntries?["theme"] == .string("dark"), "the held set keeps it")
    #expect(newer.coordinator[v2] == CardV2(columns: 4, badge: "new", theme: "dark"))
  }

  struct SessionV1: Codable, SyncValue, Equatable {
    var columns = 2
    var authToken: String?
  }

  struct SessionV2: Codable, SyncValue, Equatable {
    var columns = 2
  }

  /// The other side of keeping what a type does not know: a field a later version
  /// removed from its type is kept too, until the key is removed.
  @Test func aFieldRemovedFromTheTypeIsKeptUntilTheKeyIsRemoved() {
    let harness = Harness()
    let a = harness.device("A", monitored: [])
    let v1 = SyncKey<SessionV1>("session", default: SessionV1())
    let v2 = SyncKey<SessionV2>("session", default: SessionV2())
    a.coordinator[v1] = SessionV1(columns: 2, authToken: "secret")
    a.coordinator[v2] = SessionV2(columns: 3)
    #expect(a.value("session")?.dictionaryEntries?["authToken"] == .string("secret"))
    a.coordinator.removeValue(for: v2)
    a.coordinator[v2] = SessionV2(columns: 4)
    #expect(a.value("session") == .dictionary(["columns": .integer(4)]))
  }
}

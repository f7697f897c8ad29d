import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The ledger survives restarts, and a lost, corrupt or foreign ledger degrades to "no
/// history", never to a lost value or a wiped cloud.
struct LedgerTests {
  static func sample() -> Ledger {
    var ledger = Ledger(epoch: "abc", clock: Generation.maximum)
    ledger["theme"] = LedgerEntry(generation: 7, agreed: .value(Fingerprint(rawValue: 42)))
    ledger["gone"] = LedgerEntry(generation: Generation.maximum, agreed: .deleted)
    ledger["é.key"] = LedgerEntry(generation: 1, agreed: .value(Fingerprint(rawValue: .max)))
    let set = ReplicaState(kind: .set).edited(
      to: PropertyListValue.strings("home"), dot: Stamp(generation: 2, origin: "b.x1")
    )
    .edited(to: PropertyListValue.strings("home", "work"), dot: Stamp(generation: 3, origin: "a.y2"))
    ledger["favorites"] = LedgerEntry(generation: 3, agreed: .value(Fingerprint(rawValue: 9)), origin: "a", state: set)
    ledger["score"] = LedgerEntry(
      generation: 4, agreed: .value(Fingerprint(rawValue: 11)), origin: "a",
      state: ReplicaState(kind: .max).edited(to: .integer(7), dot: Stamp(generation: 3, origin: "b"))
        .joined(with: ReplicaState(kind: .max).edited(to: nil, dot: Stamp(generation: 4, origin: "a"))))
    ledger["map"] = LedgerEntry(
      generation: 5, agreed: .value(Fingerprint(rawValue: 12)), origin: "a",
      state: ReplicaState(kind: .dictionary).edited(
        to: .dictionary(["x": .integer(3)]), dot: Stamp(generation: 5, origin: "a")))
    // The foreign values a state descends from (and its fallback's, below).
    ledger["size"] = LedgerEntry(
      stamp: Stamp(generation: 6, origin: "a"), agreed: .value(Fingerprint(rawValue: 15)),
      madeOver: [ForeignName(rawValue: 0), ForeignName(rawValue: .max)])
    // Merges written ahead: the entries they fall back to keep their states, with or
    // without a state of the merged one.
    let before = ReplicaState(kind: .set).edited(
      to: PropertyListValue.strings("x"), dot: Stamp(generation: 1, origin: "b"))
    for (key, state) in [("read", set), ("seen", nil)] {
      var pulled = LedgerEntry(generation: 6, agreed: .value(Fingerprint(rawValue: 13)), origin: "c", state: state)
      pulled.pendingPull = LedgerEntry.PendingPull(
        localBefore: .value(Fingerprint(rawValue: 14)),
        previous: LedgerEntry.Previous(
          generation: 1, agreed: .value(Fingerprint(rawValue: 14)), origin: "b", state: before,
          madeOver: [ForeignName(rawValue: 77)]))
      ledger[key] = pulled
    }
    return ledger
  }

  @Test func snapshotAndJournalRoundTrip() throws {
    var ledger = Self.sample()
    var data = LedgerCodec.snapshot(ledger)
    #expect(try LedgerCodec.decode(data).ledger == ledger)

    let changes: [String: LedgerEntry?] = [
      "theme": LedgerEntry(generation: 8, agreed: .deleted), "gone": nil,
      "new": LedgerEntry(generation: 2, agreed: .value(Fingerprint(rawValue: 5))),
    ]
    data.append(LedgerCodec.journal(changes))
    for (key, entry) in changes { ledger[key] = entry }
    let decoded = try LedgerCodec.decode(data)
    #expect(decoded.ledger == ledger)
    #expect(decoded.records == 12)
    #expect(!decoded.damagedTail)
  }

  /// The agreement an app and its extensions share keeps what the ledger keeps: the state
  /// and the foreign values the agreed record names, so a process that takes another's
  /// agreement still finds a foreign value published again earlier than an edit made over it.
  @Test func theSharedAgreementKeepsTheNamesOfForeignValues() {
    let sample = Self.sample()
    for key in ["size", "favorites", "theme", "gone"] {
      guard var entry = sample[key] else { continue }
      entry.pendingPull = nil
      if entry.generation > 1 << 50 { entry.generation = 9 }
      #expect(SharedAgreement.decode(SharedAgreement.encode(entry)) == entry, "\(key)")
    }
    let named = sample["size"] ?? LedgerEntry(generation: 1, agreed: .deleted)
    guard case .array(let fields) = SharedAgreement.encode(named) else {
      Issue.record("not an array")
      return
    }
    for bad: [PropertyListValue] in [[.string("x")], [.integer(-1)], Array(repeating: .integer(1), count: 5)] {
      #expect(SharedAgreement.decode(.array(fields.prefix(4) + bad)) == nil)
    }
  }

  /// A torn or damaged file never yields a wrong entry: only an older state, or nothing.
  @Test func damageYieldsAnOlderStateNeverAWrongOne() {
    let original = Self.sample()
    var data = LedgerCodec.snapshot(Ledger(epoch: "abc"))
    let headerLength = data.count
    data.append(LedgerCodec.journal(original.entries.mapValues { .some($0) }))
    func check(_ damaged: Data, headerIntact: Bool) {
      guard let decoded = try? LedgerCodec.decode(damaged) else {
        #expect(!headerIntact, "an intact header is always readable")
        return
      }
      #expect(decoded.ledger.epoch == "abc")
      for (key, entry) in decoded.ledger.entries { #expect(original[key] == entry) }
    }
    for length in 0..<data.count { check(data.prefix(length), headerIntact: length >= headerLength) }
    for index in data.indices {
      var flipped = data
      flipped[index] ^= 0x10
      check(flipped, headerIntact: index >= headerLength)
    }
  }

  @Test func appendsUntilTheJournalOutgrowsTheLedger() throws {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("v0"), "theme")
    a.coordinator.sync()
    let url = a.coordinator.engine.ledgerFile.url
    let snapshotSize = try Data(contentsOf: url).count
    a.set(.string("v1"), "theme")
    a.coordinator.sync()
    #expect(try Data(contentsOf: url).count > snapshotSize, "a one-key change is appended")
    for index in 2..<100 {
      a.set(.string("v\(index)"), "theme")
      a.coordinator.sync()
    }
    // Each append also records the moved clock (33 bytes).
    #expect(try Data(contentsOf: url).count < 110 * 40, "compacted: the file stays small")
    a.restart()
    #expect(
      a.coordinator.engine.state.withLock { $0.ledger["theme"] }
        == LedgerEntry(
          generation: 100, agreed: .value(PropertyListValue.string("v99").fingerprint), origin: "A"))
  }

  @Test func tornAppendKeepsOlderHistoryAndConverges() throws {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("v1"), "theme")
    harness.round()
    a.set(.string("v2"), "theme")
    a.coordinator.sync()
    let url = a.coordinator.engine.ledgerFile.url
    let data = try Data(contentsOf: url)
    try data.dropLast(3).write(to: url)
    a.restart()
    #expect(a.coordinator.status.notes.contains { $0.contains("damaged tail") })
    a.coordinator.sync()
    harness.round()
    #expect(a.value("theme") == .string("v2"))
    #expect(b.value("theme") == .string("v2"))
  }

  @Test func restartKeepsHistory() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    let writes = a.store.statistics.writes
    a.restart()
    a.coordinator.sync()
    #expect(a.store.statistics.writes == writes)
    #expect(a.coordinator.engine.state.withLock { $0.ledger["theme"] } != nil)
  }

  @Test func corruptLedgerDegradesToNoHistory() throws {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    b.set(.string("edited"), "theme")
    b.coordinator.sync()
    harness.round()

    try Data("garbage".utf8).write(to: a.coordinator.engine.ledgerFile.url)
    a.restart()
    #expect(a.coordinator.status.notes.contains { $0.contains("ledger unreadable") })
    #expect(a.warnings.contains { $0.contains("ledger unreadable") })
    a.coordinator.sync()
    #expect(a.value("theme") == .string("edited"))
    harness.round()
    #expect(b.value("theme") == .string("edited"))
  }

  @Test func resetDomainPullsInsteadOfPushingDeletes() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme", "font"])
    a.set(.string("dusk"), "theme")
    a.set(.string("serif"), "font")
    harness.round()

    // The app wipes its defaults; the ledger file still describes the old values.
    a.defaults.removePersistentDomain(forName: a.suiteName)
    a.restart()
    a.coordinator.sync()
    harness.cloud.upload()
    #expect(a.value("theme") == .string("dusk"))
    #expect(a.value("font") == .string("serif"))
    #expect(a.record("theme")?.content == .value(.string("dusk")), "no tombstone was pushed")
  }

  @Test func domainResetWhileRunningAlsoPulls() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    a.defaults.removePersistentDomain(forName: a.suiteName)
    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: a.defaults)
    a.coordinator.waitForPendingLocalEdits()
    a.coordinator.sync()
    #expect(a.value("theme") == .string("dusk"))
    #expect(a.record("theme")?.content == .value(.string("dusk")))
    #expect(a.coordinator.status.notes.contains { $0.contains("domain was reset") })
  }

  @Test(arguments: ["", String(repeating: "x", count: 65)])
  func unusableDeviceIDIsReplacedAndReported(_ configured: String) {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"]) { $0.deviceID = configured }
    #expect(a.coordinator.deviceID.count == 6)
    #expect(a.coordinator.status.notes.contains { $0.hasPrefix("deviceID") })
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    #expect(a.record("theme")?.origin == a.coordinator.deviceID, "its records decode")
  }

  @Test func deviceIDIsGeneratedOncePerDomain() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"]) { $0.deviceID = nil }
    let generated = a.coordinator.deviceID
    #expect(generated.count == 6)
    a.restart()
    #expect(a.coordinator.deviceID == generated)
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    #expect(a.record("theme")?.origin == generated)
    #expect(a.store.value(forKey: "Zephyr.deviceID") == nil, "bookkeeping is never synced")
  }
}

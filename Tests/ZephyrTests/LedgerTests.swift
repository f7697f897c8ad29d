import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The ledger survives restarts, and a lost, corrupt or foreign ledger degrades to "no
/// history", never to a lost value or a wiped cloud.
struct LedgerTests {
  @Test func encodingRoundTrips() throws {
    var ledger = Ledger(epoch: "abc")
    ledger["theme"] = LedgerEntry(generation: 7, agreed: .value(Fingerprint(rawValue: 42)))
    ledger["gone"] = LedgerEntry(generation: Generation.maximum, agreed: .deleted)
    ledger["é.key"] = LedgerEntry(generation: 1, agreed: .value(Fingerprint(rawValue: .max)))
    #expect(try Ledger(decoding: ledger.encoded()) == ledger)
  }

  @Test func everyTruncationAndBitFlipIsDetected() {
    var ledger = Ledger(epoch: "abc")
    ledger["theme"] = LedgerEntry(generation: 7, agreed: .value(Fingerprint(rawValue: 42)))
    let data = ledger.encoded()
    for length in 0..<data.count {
      #expect(throws: LedgerError.self) { try Ledger(decoding: data.prefix(length)) }
    }
    for index in data.indices {
      var flipped = data
      flipped[index] ^= 0x10
      #expect(throws: LedgerError.self) { try Ledger(decoding: flipped) }
    }
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
    #expect(a.coordinator.state.withLock { $0.ledger["theme"] } != nil)
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

    try Data("garbage".utf8).write(to: a.coordinator.ledgerFile.url)
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

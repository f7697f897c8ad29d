import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 11, part 1: one Lamport clock per device, across keys.
struct CausalityTests {
  /// D2 writes k1 (twice: X0, then X at g2) and then k0 = Y. The store's last-writer-wins
  /// drops X for D1's older W, so D2 publishes X again ("store lost our write"). D1 has
  /// already pulled Y when it sets k1 = Z. Z follows Y, which follows X: Z must win.
  /// With generations counted per key, Z was numbered g2 like X, the tie went to the
  /// device id, and X, the older write, won everywhere.
  @Test func aWriteMadeAfterSeeingALaterWriteOfAnotherKeyWins() {
    let harness = Harness()
    let d1 = harness.device("D1", monitored: ["k0", "k1"])
    let d2 = harness.device("D2", monitored: ["k0", "k1"])
    d1.set(.string("W"), "k1")
    d2.set(.string("X0"), "k1")
    d2.set(.string("X"), "k1")
    d2.set(.string("Y"), "k0")
    harness.cloud.upload(from: "D2")
    harness.cloud.upload(from: "D1")  // the server keeps D1's W over X
    harness.cloud.download(to: "D1")
    #expect(d1.value("k0") == .string("Y"), "D1 has seen Y")

    d1.set(.string("Z"), "k1")
    harness.cloud.download(to: "D2")  // D2 sees W and publishes X again
    #expect(d2.record("k1")?.content == .value(.string("X")))
    let y = d2.record("k0")?.generation ?? 0
    #expect((d1.record("k1")?.generation ?? 0) > y, "Z is numbered above Y, which D1 read before writing it")

    harness.cloud.upload(from: "D1")
    harness.cloud.upload(from: "D2")  // the server now holds X again
    for _ in 0..<3 { harness.round() }
    #expect(harness.values(of: "k1") == ["D1": .string("Z"), "D2": .string("Z")])
    #expect(RemoteState(storeValue: harness.cloud.serverValues["k1"]).record?.content == .value(.string("Z")))
  }

  /// A write is numbered above every generation the device read, on any key: after
  /// pulling a key at g5, a first edit of another key goes out at g6.
  @Test func aFirstEditIsNumberedAboveEverythingTheDeviceRead() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["busy", "quiet"])
    let b = harness.device("B", monitored: ["busy", "quiet"])
    for index in 1...5 { a.set(.integer(Int64(index)), "busy") }
    harness.cloud.deliver()
    #expect(b.value("busy") == .integer(5))
    b.set(.string("first"), "quiet")
    #expect(b.record("quiet")?.generation == 6)
  }

  /// The clock survives a relaunch: it is saved with the ledger, even when the key that
  /// raised it has left the ledger since.
  @Test func theClockIsSavedWithTheLedger() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["busy", "later"])
    for index in 1...4 { a.set(.integer(Int64(index)), "busy") }
    a.coordinator.engine.state.withLock { $0.setLedger("busy", nil) }
    a.coordinator.engine.saveLedger()
    a.restart()
    #expect(a.coordinator.engine.state.withLock { $0.ledger["busy"] } == nil)
    #expect(a.coordinator.engine.state.withLock { $0.ledger.clock } == 4)
    a.set(.string("x"), "later")
    #expect(a.record("later")?.generation == 5)
  }

  /// The clock reads back from a snapshot, and a journal's clock record moves it on.
  @Test func theClockReadsBackFromSnapshotAndJournal() throws {
    var ledger = Ledger(epoch: "e", clock: 100)
    ledger["a"] = LedgerEntry(generation: 7, agreed: .deleted, origin: "x")
    ledger["b"] = LedgerEntry(generation: 3, agreed: .deleted, origin: "x")
    let data = LedgerCodec.snapshot(ledger)
    #expect(try LedgerCodec.decode(data).ledger.clock == 100)
    #expect(try LedgerCodec.decode(data + LedgerCodec.journal([:], clock: 120)).ledger.clock == 120)
  }
}

extension RemoteState {
  fileprivate var record: SyncRecord? {
    if case .record(let record) = self { record } else { nil }
  }
}

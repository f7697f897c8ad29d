import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Before the first unlock after a restart (or when prewarmed), `UserDefaults`
/// reads as empty and the ledger folder cannot be read. Zephyr must not take that for a
/// reset or for deletes: it touches nothing until protected data is available, holds what
/// was asked, and then does it. Each test only flips `isProtectedDataAvailable`.
@Suite struct ProtectedDataTests {
  private static let theme = SyncKey<String>("theme", default: "light")

  /// Two devices agreeing on theme = dusk; A's ledger folder is out of reach while locked.
  private func agreedPair() -> (Harness, TestDevice, TestDevice) {
    let harness = Harness()
    let a = harness.lockableDevice("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    #expect(b.value("theme") == .string("dusk"))
    return (harness, a, b)
  }

  @Test func aLaunchBeforeTheFirstUnlockReadsAndWritesNothingAndResumesAfterIt() {
    let (harness, a, _) = agreedPair()
    let epoch = a.defaults.string(forKey: EngineState.ledgerIDKey)
    let ledger = a.ledgerFiles
    let writes = a.store.statistics.writes

    a.faithful.isProtectedDataAvailable = false
    a.restart()  // launched before the first unlock
    a.coordinator.sync()
    a.settle()
    #expect(a.coordinator.status.isProtectedDataAvailable == false)
    #expect(a.coordinator.status.waitingOperations >= 1)
    #expect(a.store.statistics.writes == writes, "a store write while locked")

    a.faithful.isProtectedDataAvailable = true
    a.settle()
    #expect(a.coordinator.status.isProtectedDataAvailable)
    #expect(a.coordinator.status.waitingOperations == 0)
    #expect(!a.wroteLedgerWhileLocked, "the ledger folder was written while locked")
    #expect(a.defaults.string(forKey: EngineState.ledgerIDKey) == epoch, "the domain was taken for a reset")
    #expect(a.value("theme") == .string("dusk"))
    #expect(a.ledgerFiles == ledger, "the ledger changed though nothing did")
    #expect(a.store.statistics.writes == writes)
    #expect(!a.coordinator.status.notes.contains { $0.contains("reset") || $0.contains("ledger") })
    withExtendedLifetime(harness) {}
  }

  @Test func anInboundEventWhileLockedIsAppliedOnceUnlocked() {
    let (harness, a, b) = agreedPair()
    b.set(.string("dawn"), "theme")
    b.coordinator.sync()
    harness.cloud.upload()

    a.faithful.isProtectedDataAvailable = false
    harness.cloud.download(to: "A")  // the event arrives while A is locked
    a.settle()
    #expect(a.coordinator.status.waitingOperations == 1)
    #expect(a.defaults.string(forKey: "theme") == nil, "reads return nothing while locked")

    a.faithful.isProtectedDataAvailable = true
    a.settle()
    #expect(!a.wroteLedgerWhileLocked)
    #expect(a.value("theme") == .string("dawn"))
    #expect(a.record("theme")?.content == .value(.string("dawn")))
  }

  /// Another suite's unlock says nothing of this one's: the coordinator runs what waits
  /// on its own suite's post (or iOS's), not on the thread of some other suite's, where a
  /// caller waiting for its own unlock could not see it finish.
  @Test func anotherSuitesUnlockRunsNothingOfThisCoordinator() {
    let harness = Harness()
    var quiet: QuietlyReportingDefaults?
    let a = harness.device(
      "A", monitored: ["theme"],
      opening: { name in
        quiet = QuietlyReportingDefaults(suiteName: name)
        return quiet
      })
    let b = harness.device("B", monitored: ["theme"])
    let otherName = "zephyr-tests.other.\(UUID().uuidString.prefix(8))"
    guard let suite = quiet, let other = AppleFaithfulDefaults(suiteName: otherName) else {
      Issue.record("cannot open the suites")
      return
    }
    b.set(.string("dawn"), "theme")
    b.coordinator.sync()
    harness.cloud.upload()
    suite.available.withLock { $0 = false }
    harness.cloud.download(to: "A")
    a.settle()
    #expect(a.coordinator.status.waitingOperations == 1)

    suite.available.withLock { $0 = true }  // unlocked, not posted yet
    other.isProtectedDataAvailable = false
    other.isProtectedDataAvailable = true  // another suite posts its unlock
    #expect(a.coordinator.status.waitingOperations == 1, "another suite's unlock ran A's backlog")

    NotificationCenter.default.post(name: ProtectedDataNotification.didBecomeAvailable, object: suite)
    a.settle()
    #expect(a.coordinator.status.waitingOperations == 0)
    #expect(a.value("theme") == .string("dawn"))
    other.removePersistentDomain(forName: otherName)
  }

  @Test func aSyncAndAnEditWhileLockedLoseNothing() {
    let (harness, a, b) = agreedPair()
    let writes = a.store.statistics.writes

    a.faithful.isProtectedDataAvailable = false
    a.set(.string("midnight"), "theme")  // the app writes while locked: kept in memory
    a.coordinator.sync()
    #expect(a.store.statistics.writes == writes, "a store write while locked")

    a.faithful.isProtectedDataAvailable = true
    a.settle()
    #expect(!a.wroteLedgerWhileLocked)
    #expect(a.value("theme") == .string("midnight"))
    harness.round()
    #expect(b.value("theme") == .string("midnight"))
    #expect(harness.cloud.serverValues["theme"].map { RemoteState(storeValue: $0) } != nil)
  }

  @Test func aTypedSetWhileLockedIsHeldThenWrittenAndPushed() {
    let (harness, a, b) = agreedPair()
    let writes = a.store.statistics.writes

    a.faithful.isProtectedDataAvailable = false
    a.coordinator[Self.theme] = "noon"
    a.settle()
    #expect(a.coordinator[Self.theme] == "noon", "a held set reads back as set")
    #expect(a.store.statistics.writes == writes, "a store write while locked")
    #expect(a.defaults.string(forKey: "theme") == nil, "UserDefaults was written while locked")

    a.faithful.isProtectedDataAvailable = true
    a.settle()
    #expect(!a.wroteLedgerWhileLocked)
    #expect(a.value("theme") == .string("noon"))
    #expect(a.record("theme")?.content == .value(.string("noon")))
    harness.round()
    #expect(b.value("theme") == .string("noon"))
  }

  /// A stream cannot read the value while locked: it yields nothing (not the default)
  /// until the data is available, then the stored value.
  @Test func aStreamMadeWhileLockedYieldsTheStoredValueOnceUnlocked() async {
    let (harness, a, _) = agreedPair()
    a.faithful.isProtectedDataAvailable = false
    let stream = a.coordinator.changes(of: Self.theme)
    a.faithful.isProtectedDataAvailable = true
    var values = stream.makeAsyncIterator()
    #expect(await values.next() == "dusk")
    withExtendedLifetime(harness) {}
  }

  /// The check never mistakes a real reset for a locked device: an emptied domain, while
  /// protected data is available, is still a reset, and the store's values come back.
  @Test func aRealResetIsStillAReset() {
    let (harness, a, _) = agreedPair()
    let epoch = a.defaults.string(forKey: EngineState.ledgerIDKey)
    a.defaults.removePersistentDomain(forName: a.suiteName)
    a.settle()  // the push the removal announced runs first
    a.coordinator.sync()
    #expect(a.coordinator.status.isProtectedDataAvailable)
    #expect(a.coordinator.status.notes.contains { $0.contains("reset") })
    #expect(a.defaults.string(forKey: EngineState.ledgerIDKey) != epoch)
    #expect(a.value("theme") == .string("dusk"))
    withExtendedLifetime(harness) {}
  }
}

/// A suite that reports protected data and changes it without posting, so that a test
/// decides which notification reaches the coordinator.
private final class QuietlyReportingDefaults: UserDefaults, ProtectedDataReporting {
  let available = Locked(true)
  var isProtectedDataAvailable: Bool { available.withLock { $0 } }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 9: data loss and silent breakage found by running the public API the way real
/// apps run it. One named regression test per item (item 1, the initial download, is
/// `SyncScenarioTests.writesBeforeTheInitialDownloadYieldToTheCloudWhateverTheIDs`;
/// items 6 and 8 are `LedgerFileNameTests` and `FingerprintTests`).
struct TopologyTests {
  /// Item 3: a value another device wrote after `sync()` read the store must survive the
  /// tombstone collection at the end of that sync.
  @Test func tombstoneCollectionNeverDeletesAValueWrittenAfterTheSnapshot() {
    // Linux-plain: the interleaved download runs inside A's store write, on A's thread,
    // so it lands between the snapshot and the collection every time.
    let harness = Harness(world: .linuxPlain)
    let clock = Locked(Date(timeIntervalSince1970: 1_000_000))
    let now: @Sendable () -> Date = { clock.withLock { $0 } }
    let a = harness.device("A", monitored: ["gone", "other"]) { $0.clock = now }
    let b = harness.device("B", monitored: ["gone", "other"]) { $0.clock = now }
    a.set(.string("x"), "gone")
    harness.round()
    a.remove("gone")
    harness.round()
    #expect(harness.cloud.serverValues["gone"] != nil, "the tombstone is in the store")
    clock.withLock { $0 += 31 * 24 * 60 * 60 }  // past the 30-day lifetime

    b.set(.string("back"), "gone")
    b.coordinator.sync()
    harness.cloud.upload(from: "B")
    a.set(.string("edit"), "other")  // gives A's sync a store write to interleave with
    let cloud = harness.cloud
    cloud.duringNextWrite(to: "A") { cloud.download(to: "A", notify: false) }
    a.coordinator.sync()

    #expect(a.record("gone")?.content == .value(.string("back")), "A's collection removed B's new value")
    harness.round()
    #expect(harness.cloud.serverValues["gone"] != nil)
    #expect(a.value("gone") == .string("back"))
    #expect(b.value("gone") == .string("back"))
  }

  /// Item 4: a key named several times is reconciled once: one store write. (Linux-plain:
  /// the edit must still be unpushed when `sync(keys:)` runs; in Apple's world it is
  /// pushed as it is made.)
  @Test func aKeyNamedTwiceIsReconciledOnce() {
    let harness = Harness(world: .linuxPlain)
    let a = harness.device("A", monitored: ["k"])
    a.set(.string("v1"), "k")
    a.coordinator.sync()
    a.set(.string("v2"), "k")
    let before = a.store.statistics.writes
    a.coordinator.sync(keys: ["a", "k", "k", "k"])
    #expect(a.store.statistics.writes == before + 1)
    #expect(a.record("k")?.generation == 2)
  }

  /// Item 5: a ledger that cannot be saved is reported in `status`, and after a relaunch
  /// the device does not pull its own older record over the edit it made since.
  @Test func aLedgerThatCannotBeSavedIsReportedAndLosesNoEdit() throws {
    let harness = Harness(world: .linuxPlain)
    // A regular file where the ledger folder should be: every save fails (as on a full
    // disk or a folder that data protection has locked).
    let blocker = harness.ledgerDirectory.appendingPathComponent("blocked")
    try FileManager.default.createDirectory(at: harness.ledgerDirectory, withIntermediateDirectories: true)
    try Data("not a folder".utf8).write(to: blocker)
    let a = harness.device("A", monitored: ["theme"]) { $0.ledgerDirectory = blocker }
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("v1"), "theme")
    a.coordinator.sync()
    #expect(a.coordinator.status.notes.contains { $0.hasPrefix("ledger not saved:") })
    #expect(a.warnings.filter { $0.hasPrefix("could not save the ledger") }.count == 1, "warned once")
    harness.round()

    a.set(.string("v2"), "theme")  // not announced in this world: pushed by the next sync
    a.restart()  // the ledger on disk has nothing
    a.coordinator.sync()
    #expect(a.value("theme") == .string("v2"), "the device pulled its own older record over its edit")
    harness.round()
    #expect(b.value("theme") == .string("v2"))
  }

  /// Item 5: a ledger file deleted between launches is noted in `status`.
  @Test func aLedgerFileDeletedBetweenLaunchesIsNoted() throws {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("v1"), "theme")
    a.coordinator.sync()
    try FileManager.default.removeItem(at: a.coordinator.engine.ledgerFile.url)
    a.restart()
    #expect(a.coordinator.status.notes.contains { $0.hasPrefix("ledger file missing") })
    a.set(.string("v2"), "theme")
    #expect(a.record("theme")?.content == .value(.string("v2")))
  }

  /// Item 10: `synchronize()` returning `false` (no entitlement, no account) is warned
  /// once and shown in `status`.
  @Test func aFailingSynchronizeIsWarnedOnceAndShownInStatus() {
    let store = RefusingStore()
    let harness = Harness()
    let suiteName = "zephyr-tests.\(UUID().uuidString.prefix(8)).refusing"
    let defaults = AppleFaithfulDefaults(suiteName: suiteName)
    defer { defaults?.removePersistentDomain(forName: suiteName) }
    guard let defaults else { return #expect(Bool(false), "cannot open \(suiteName)") }
    let warnings = Locked<[String]>([])
    let coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: store,
      configuration: SyncConfiguration(
        deviceID: "R",
        logHandler: { message in if message.level == .warning { warnings.withLock { $0.append(message.text) } } },
        ledgerDirectory: harness.ledgerDirectory))
    #expect(store.synchronizeCalls.withLock { $0 } == 1, "synchronize() at launch")
    coordinator.addKeysToBeMonitored(keys: ["theme"])
    defaults.set("a", forKey: "theme")
    coordinator.waitForPendingLocalEdits()
    defaults.set("b", forKey: "theme")
    coordinator.waitForPendingLocalEdits()
    #expect(coordinator.status.lastSynchronizeSucceeded == false)
    #expect(warnings.withLock { $0 }.filter { $0.contains("synchronize() returned false") }.count == 1)
    #expect(coordinator.status.description.contains("FAILED"))
  }
}

extension TopologyTests {
  /// Item 10: decision lines carry their values in `text` only; `redactedText`, which
  /// the default sink logs as public on Apple platforms, keeps the key and hides them.
  @Test func decisionLinesRedactValuesButNotKeys() {
    let harness = Harness()
    let messages = Locked<[LogMessage]>([])
    let a = harness.device("A", monitored: ["theme"]) { configuration in
      configuration.logHandler = { message in messages.withLock { $0.append(message) } }
    }
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("secret-dusk"), "theme")
    harness.round()
    b.set(.string("secret-dawn"), "theme")
    harness.round()
    let decisions = messages.withLock { $0 }.filter {
      $0.text.hasPrefix("push theme") || $0.text.hasPrefix("pull theme")
    }
    #expect(decisions.count >= 2)
    for message in decisions {
      #expect(message.text.contains("secret-"))
      #expect(!message.redactedText.contains("secret-"), "\(message.redactedText)")
      #expect(message.redactedText.contains("theme") && message.redactedText.contains("<private>"))
    }
  }
}

/// A store whose `synchronize()` always fails, as without the entitlement.
private final class RefusingStore: KeyValueSyncStore {
  let values = Locked<[String: PropertyListValue]>([:])
  let synchronizeCalls = Locked(0)

  func value(forKey key: String) -> PropertyListValue? { values.withLock { $0[key] } }
  func allValues() -> [String: PropertyListValue] { values.withLock { $0 } }
  func setValue(_ value: PropertyListValue, forKey key: String) { values.withLock { $0[key] = value } }
  func removeValue(forKey key: String) { values.withLock { $0[key] = nil } }
  func synchronize() -> Bool {
    synchronizeCalls.withLock { $0 += 1 }
    return false
  }
  func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
    ObservationToken {}
  }
}

/// Issue 9, item 2: an app and its widget sync one app-group suite from two processes:
/// separate containers (ledger folders), one suite, one store. Modelled by two
/// coordinators over two instances of one suite, with their own ledger folders.
struct AppGroupTests {
  private struct Pair {
    let cloud = SimulatedCloud()
    let suiteName = "group.zephyr-tests.\(UUID().uuidString.prefix(8))"
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("zephyr-appgroup-\(UUID().uuidString)")
    let appDefaults: AppleFaithfulDefaults
    let widgetDefaults: AppleFaithfulDefaults
    let app: SyncCoordinator
    let widget: SyncCoordinator
    let notes: Locked<[String]>

    init?() {
      guard let appDefaults = AppleFaithfulDefaults(suiteName: suiteName),
        let widgetDefaults = AppleFaithfulDefaults(suiteName: suiteName)
      else { return nil }
      self.appDefaults = appDefaults
      self.widgetDefaults = widgetDefaults
      let notes = Locked<[String]>([])
      self.notes = notes
      let store = cloud.device("phone", initiallyDownloaded: true)
      let root = self.root
      let suiteName = self.suiteName
      let configuration = { (process: String) -> SyncConfiguration in
        SyncConfiguration(
          logHandler: { message in notes.withLock { $0.append("\(process): \(message.text)") } },
          ledgerDirectory: root.appendingPathComponent(process))
      }
      app = SyncCoordinator(
        defaults: appDefaults, suiteName: suiteName, store: store, configuration: configuration("app"))
      widget = SyncCoordinator(
        defaults: widgetDefaults, suiteName: suiteName, store: store, configuration: configuration("widget"))
    }

    /// Both processes monitor `theme`; the app sets it (its push runs) and the widget
    /// syncs, so that both ledgers agree on `value`.
    func agree(onTheme value: String) {
      app.addKeysToBeMonitored(keys: ["theme"])
      widget.addKeysToBeMonitored(keys: ["theme"])
      appDefaults.set(value, forKey: "theme")
      app.waitForPendingLocalEdits()
      widget.sync()
    }

    func cleanUp() {
      appDefaults.removePersistentDomain(forName: suiteName)
      try? FileManager.default.removeItem(at: root)
    }
  }

  @Test func eachProcessHasItsOwnDeviceIDAndKeepsIt() {
    guard let pair = Pair() else { return #expect(Bool(false), "cannot open the suite") }
    defer { pair.cleanUp() }
    #expect(pair.app.deviceID != pair.widget.deviceID, "two processes wrote records under one id")
    let restarted = SyncCoordinator(
      defaults: pair.widgetDefaults, suiteName: pair.suiteName, store: pair.cloud.device("phone"),
      configuration: SyncConfiguration(ledgerDirectory: pair.root.appendingPathComponent("widget")))
    #expect(restarted.deviceID == pair.widget.deviceID)
  }

  /// After one reset of the shared suite, each process used to write a fresh epoch that
  /// the other read as another reset: history wiped on every operation.
  @Test func oneResetOfTheSharedSuiteClearsHistoryOnce() {
    guard let pair = Pair() else { return #expect(Bool(false), "cannot open the suite") }
    defer { pair.cleanUp() }
    pair.agree(onTheme: "dusk")
    pair.app.sync()

    pair.appDefaults.removePersistentDomain(forName: pair.suiteName)  // the app resets its settings
    pair.app.waitForPendingLocalEdits()
    pair.widget.waitForPendingLocalEdits()
    for _ in 0..<4 {
      pair.app.sync()
      pair.widget.sync()
    }
    let resets = pair.notes.withLock { $0 }.filter { $0.contains("the defaults domain was reset") }
    #expect(resets.filter { $0.hasPrefix("app:") }.count <= 1, "\(resets)")
    #expect(resets.filter { $0.hasPrefix("widget:") }.count <= 1, "\(resets)")
    #expect(pair.appDefaults.string(forKey: "theme") == "dusk", "the reset domain pulled the store's value")

    // History survives from here on: an edit in the app is a local edit, not replaced.
    pair.appDefaults.set("night", forKey: "theme")
    pair.app.waitForPendingLocalEdits()
    pair.widget.sync()
    #expect(pair.widgetDefaults.string(forKey: "theme") == "night")
    #expect(pair.app.status.notes.filter { $0.contains("reset") }.count <= 1)
  }

  /// The widget's ledger is older than the app's: the app pushed "off", then the person
  /// set "dim", whose push is still pending when an inbound event reaches the widget. The
  /// widget used to take "dim" for its own edit and the app's older "off" for news, pull
  /// "off" over "dim", and "off" ended up everywhere.
  @Test func aProcessWithAnOlderLedgerNeverUndoesTheOtherProcesssEdit() {
    guard let pair = Pair() else { return #expect(Bool(false), "cannot open the suite") }
    defer { pair.cleanUp() }
    pair.agree(onTheme: "on")
    pair.appDefaults.set("off", forKey: "theme")
    pair.app.waitForPendingLocalEdits()  // pushed; the widget's ledger still says "on"
    // The person's newest edit, its push still pending: written where no one announces it.
    UserDefaults(suiteName: pair.suiteName)?.set("dim", forKey: "theme")

    pair.widget.engine.receive(ExternalChange(reason: .serverChange, keys: ["theme"]))
    pair.app.sync()
    #expect(pair.widgetDefaults.string(forKey: "theme") == "dim")
    let record = RemoteState(storeValue: pair.cloud.device("phone").value(forKey: "theme"))
    guard case .record(let stored) = record else { return #expect(Bool(false), "\(record)") }
    #expect(stored.content == .value(.string("dim")))
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Two or three devices on one simulated cloud, each with a real `UserDefaults` suite:
/// one scenario per bug that users hit with earlier libraries.
struct SyncScenarioTests {
  @Test(arguments: Backend.allCases)
  func editOnOneDeviceReachesTheOtherWithOneNotification(backend: Backend) async {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme", "size"])
    let b = harness.device("B", monitored: ["theme", "size"])
    let recorder = NotificationRecorder(b.coordinator)

    a.set(.string("dusk"), "theme")
    a.set(.integer(14), "size")
    a.coordinator.sync()
    harness.driver.deliver()

    #expect(b.value("theme") == .string("dusk"))
    #expect(b.value("size") == .integer(14))
    let posts = await recorder.received()
    #expect(posts == [NotificationRecorder.Post(keys: ["size", "theme"], onMainQueue: true)])
  }

  @Test(arguments: Backend.allCases)
  func editsOfDifferentKeysOnTwoDevicesBothSurvive(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme", "size"])
    let b = harness.device("B", monitored: ["theme", "size"])
    a.set(.string("dusk"), "theme")
    b.set(.integer(14), "size")
    a.coordinator.sync()
    b.coordinator.sync()  // before either delivers

    harness.round()

    for device in [a, b] {
      #expect(device.value("theme") == .string("dusk"))
      #expect(device.value("size") == .integer(14))
    }
    #expect(harness.driver.serverValues.count == 2)
  }

  @Test(arguments: Backend.allCases)
  func sameKeyEditedOnTwoDevicesConvergesInOneRound(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("base"), "theme")
    harness.round()
    #expect(b.value("theme") == .string("base"))

    a.set(.string("from A"), "theme")
    b.set(.string("from B"), "theme")
    a.coordinator.sync()
    b.coordinator.sync()
    harness.round()

    #expect(a.value("theme") == b.value("theme"))
    let writes = (a.syncStore.writeCount, b.syncStore.writeCount)
    harness.round()
    #expect((a.syncStore.writeCount, b.syncStore.writeCount) == writes, "a further round writes nothing")
  }

  /// Needs an edit the coordinator has not pushed yet: in the Linux-plain world an edit
  /// announces nothing. (In Apple's, the same window is the coalesced push still queued.)
  @Test(arguments: Backend.allCases)
  func syncPrefersLocalAndInboundPrefersRemote(backend: Backend) {
    let harness = Harness(world: .linuxPlain, backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("base"), "theme")
    harness.round()

    // A pushes its edit; B edits too but has not synced when A's record arrives.
    a.set(.string("from A"), "theme")
    a.coordinator.sync()
    b.set(.string("from B"), "theme")
    harness.driver.upload()
    harness.driver.download(to: "B")  // inbound event: remote wins on B
    #expect(b.value("theme") == .string("from A"))

    // Now a conflict met by sync(): local wins.
    b.set(.string("B again"), "theme")
    a.set(.string("A again"), "theme")
    a.coordinator.sync()
    harness.driver.upload()
    harness.driver.download(to: "B", notify: false)
    b.coordinator.sync()
    #expect(b.value("theme") == .string("B again"))
    #expect(b.record("theme")?.content == .value(.string("B again")))
    harness.round()
    #expect(a.value("theme") == .string("B again"))
  }

  @Test(arguments: Backend.allCases)
  func deletePropagatesAndIsNotResurrected(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    let c = harness.device("C", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    #expect(c.value("theme") == .string("dusk"))

    a.remove("theme")
    a.coordinator.sync()
    harness.driver.upload()
    harness.driver.download(to: "B")
    #expect(b.value("theme") == nil)
    guard case .deleted? = a.record("theme")?.content else {
      Issue.record("no tombstone in the store")
      return
    }

    // C missed the event and still holds the value: its sync must not bring it back.
    #expect(c.value("theme") == .string("dusk"))
    harness.driver.download(to: "C", notify: false)
    c.coordinator.sync()
    #expect(c.value("theme") == nil)
    harness.round()
    #expect(harness.values(of: "theme").values.allSatisfy { $0 == nil })

    // A newer write after the delete wins over the tombstone.
    b.set(.string("dawn"), "theme")
    b.coordinator.sync()
    harness.round()
    #expect(harness.values(of: "theme").values.allSatisfy { $0 == .string("dawn") })
  }

  @Test(arguments: Backend.allCases)
  func absenceFromTheStoreIsNotADelete(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    let generation = a.record("theme")?.generation

    harness.driver.removeServerValue(forKey: "theme")
    harness.driver.download(to: "A")
    #expect(a.value("theme") == .string("dusk"), "an inbound event must not remove the value")
    a.coordinator.sync()
    #expect(a.value("theme") == .string("dusk"))
    #expect(a.record("theme")?.generation == generation)
    harness.driver.upload()
    #expect(harness.driver.serverValues["theme"] != nil, "the value is pushed again")
  }

  /// A new install that syncs before any store event (the Linux-plain world announces no
  /// edit, so nothing is pushed before `sync()`).
  @Test(arguments: Backend.allCases)
  func newDeviceNeverOverwritesCloudHistory(backend: Backend) {
    let harness = Harness(world: .linuxPlain, backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    harness.driver.upload()

    // B wrote its own value before its first sync.
    let b = harness.device("B", monitored: ["theme"])
    b.set(.string("factory"), "theme")
    harness.driver.download(to: "B", notify: false)
    b.coordinator.sync()
    #expect(b.value("theme") == .string("dusk"))
    harness.driver.upload()
    #expect(harness.driver.serverValues["theme"] == a.syncStore.value(forKey: "theme"))
  }

  /// Issue 9, item 1: in Apple's world a new install's first-launch write is pushed at
  /// once, and the store discards it until its initial download, which reports
  /// `initialSync`. Whatever the device ids sort like, the cloud's value wins, on every
  /// device; a key the cloud never had is uploaded after the download.
  @Test(arguments: ["A", "Z"], Backend.allCases)
  func writesBeforeTheInitialDownloadYieldToTheCloudWhateverTheIDs(newID: String, backend: Backend) {
    let harness = Harness(backend: backend)
    let old = harness.device("M", monitored: ["theme", "fresh"])
    old.set(.string("dark"), "theme")
    harness.round()

    let install = harness.device(newID, monitored: ["theme", "fresh"], initiallyDownloaded: false)
    install.set(.string("light"), "theme")  // the app's first-launch default, pushed at once
    install.set(.string("mine"), "fresh")
    #expect(install.syncStore.writeCount >= 2, "the blind writes were pushed")
    harness.driver.upload()
    #expect(harness.driver.serverValues["fresh"] == nil, "nothing is sent before the initial download")
    harness.driver.download(to: newID)  // initialSync
    #expect(install.value("theme") == .string("dark"))
    #expect(install.value("fresh") == .string("mine"), "a key the cloud never had keeps its value")
    harness.round()
    harness.round()
    #expect(install.value("theme") == .string("dark"))
    #expect(old.value("theme") == .string("dark"))
    #expect(old.value("fresh") == .string("mine"), "and is uploaded after the download")
  }

  @Test(arguments: Backend.allCases)
  func newDeviceThatUploadsBeforeItsFirstDownloadYieldsToEditedCloudHistory(backend: Backend) {
    // Before its first download a new install cannot see the cloud's value and uploads its
    // own. A value that was edited after its first upload sits at a later generation and
    // wins. (One that nobody edited since its own first upload ties on generation and the
    // device ids decide: see Sources/Zephyr/Zephyr.docc/LimitsOfTheGuarantees.md.)
    let harness = Harness(backend: backend)
    let old = harness.device("M", monitored: ["theme"])
    old.set(.string("first"), "theme")
    harness.round()
    old.set(.string("cloud"), "theme")
    harness.round()

    let fresh = harness.device("Z", monitored: ["theme"])
    fresh.set(.string("factory"), "theme")
    fresh.coordinator.sync()
    harness.driver.upload()
    harness.round()
    harness.round()
    #expect(harness.values(of: "theme").values.allSatisfy { $0 == .string("cloud") })
  }

  @Test(arguments: Backend.allCases)
  func registeredDefaultsAndSystemKeysAreNeverUploaded(backend: Backend) {
    let harness = Harness(backend: backend)
    // Registered defaults are shared by every suite in the process: keep these keys unique.
    let registered = "registered-\(UUID().uuidString)"
    let shadowed = "shadowed-\(UUID().uuidString)"
    let a = harness.device("A", monitored: [registered, shadowed])
    a.defaults.register(defaults: [registered: "fallback", shadowed: "fallback"])
    a.set(.string("en"), "AppleLanguages")
    a.set(.bool(true), "NSWindowFrame")
    a.set(.string("x"), "com.apple.something")
    a.set(.string("dusk"), shadowed)

    a.coordinator.sync()
    a.coordinator.sync(keys: [registered, shadowed])
    harness.driver.post(ExternalChange(reason: .serverChange, keys: nil), to: "A")
    harness.driver.upload()

    #expect(Set(harness.driver.serverValues.keys) == [shadowed])
    #expect(a.record(shadowed)?.content == .value(.string("dusk")))
  }

  @Test(arguments: Backend.allCases)
  func dottedKeysSyncLikeAnyOther(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["com.example.theme"])
    let b = harness.device("B", monitored: ["com.example.theme"])
    a.set(.string("dusk"), "com.example.theme")
    a.coordinator.sync()
    harness.driver.deliver()
    #expect(b.value("com.example.theme") == .string("dusk"))
    #expect(Set(harness.driver.serverValues.keys) == ["com.example.theme"])
  }

  @Test(arguments: Backend.allCases)
  func repeatedSyncsWriteNothingAndNeverRevertALocalEdit(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    let writes = a.syncStore.writeCount

    a.coordinator.sync()
    a.coordinator.sync()
    #expect(a.syncStore.writeCount == writes)

    // The old two-launch revert: edit, relaunch, sync twice.
    a.set(.string("dawn"), "theme")
    a.restart()
    a.coordinator.sync()
    a.coordinator.sync()
    #expect(a.value("theme") == .string("dawn"))
    harness.round()
    #expect(b.value("theme") == .string("dawn"))
    #expect(a.value("theme") == .string("dawn"))
  }

  @Test(arguments: Backend.allCases)
  func didChangeNotificationAfterAPullCausesNoPush(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    harness.driver.deliver()
    #expect(b.value("theme") == .string("dusk"))
    let writes = b.syncStore.writeCount

    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: b.defaults)
    b.coordinator.waitForPendingLocalEdits()
    #expect(b.syncStore.writeCount == writes)

    // While a real edit announced the same way is pushed, once, with one synchronize().
    let synchronizations = b.syncStore.synchronizeCount
    b.set(.string("dawn"), "theme")
    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: b.defaults)
    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: b.defaults)
    b.coordinator.waitForPendingLocalEdits()
    #expect(b.syncStore.writeCount == writes + 1)
    #expect(b.syncStore.synchronizeCount == synchronizations + 1)
    #expect(b.record("theme")?.content == .value(.string("dawn")))
  }

  @Test(arguments: Backend.allCases)
  func syncReturnsAfterPulledValuesAreWritten(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A")
    let b = harness.device("B")
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    harness.driver.upload()
    harness.driver.download(to: "B", notify: false)
    b.coordinator.sync()
    #expect(b.defaults.string(forKey: "theme") == "dusk")
  }

  @Test(arguments: Backend.allCases)
  func pullNeverOverwritesAnEditMadeWhileItWasDecided(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.round()
    a.set(.string("from A"), "theme")
    a.coordinator.sync()
    harness.driver.upload()

    let suiteName = b.suiteName
    b.coordinator.engine.testHooks.withLock { hooks in
      hooks.beforePullWrite = { key in UserDefaults(suiteName: suiteName)?.set("typed meanwhile", forKey: key) }
    }
    harness.driver.download(to: "B")
    #expect(b.value("theme") == .string("typed meanwhile"))
    b.coordinator.engine.testHooks.withLock { $0.beforePullWrite = nil }
    b.coordinator.sync()
    harness.round()
    #expect(a.value("theme") == .string("typed meanwhile"))
  }

  @Test(arguments: Backend.allCases)
  func releasedCoordinatorAppliesNoEvents(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"])
    var b: SyncCoordinator? = SyncCoordinator(
      defaults: a.defaults, suiteName: a.suiteName, store: harness.driver.testStore("B", initiallyDownloaded: true),
      configuration: SyncConfiguration(ledgerDirectory: harness.ledgerDirectory))
    b?.addKeysToBeMonitored(keys: ["theme"])
    weak let released = b
    b = nil
    #expect(released == nil)
    let other = harness.device("C", monitored: ["theme"])
    other.set(.string("dusk"), "theme")
    other.coordinator.sync()
    harness.driver.upload()
    harness.driver.download(to: "B")
    #expect(a.value("theme") == nil)
  }
}

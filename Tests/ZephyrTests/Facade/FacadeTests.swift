import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The static facade forwards every call to `Zephyr.shared`. Serialized: it is global.
@Suite(.serialized)
struct FacadeTests {
  @Test func everyCallForwardsToTheSharedCoordinator() throws {
    let harness = Harness()
    let a = harness.device("A")
    SharedFacade.using(a.coordinator) {
      Zephyr.addKeysToBeMonitored(keys: "theme", "font")
      Zephyr.addKeysToBeMonitored(keys: ["size"])
      #expect(Zephyr.shared.monitoredKeys == ["theme", "font", "size"])
      Zephyr.removeKeysFromBeingMonitored(keys: "font")
      Zephyr.removeKeysFromBeingMonitored(keys: ["size"])
      #expect(Zephyr.status.monitoredKeys == ["theme"])

      Zephyr.debugEnabled = false
      #expect(a.coordinator.configuration.debugEnabled == false)
      Zephyr.debugEnabled = true
      Zephyr.syncUbiquitousKeyValueStoreOnChange = false
      let atLaunch = a.store.statistics.synchronizeCalls  // one, as Apple recommends
      a.set(.string("dusk"), "theme")
      a.set(.string("serif"), "font")
      a.set(.integer(3), "size")
      Zephyr.sync(keys: "theme")
      #expect(Set(a.store.cachedValues.keys) == ["theme"])
      #expect(a.store.statistics.synchronizeCalls == atLaunch)
      Zephyr.syncUbiquitousKeyValueStoreOnChange = true
      Zephyr.sync(keys: ["font"])
      #expect(a.store.statistics.synchronizeCalls == atLaunch + 1)
      Zephyr.sync()
      #expect(Set(a.store.cachedValues.keys) == ["theme", "font", "size"])
    }
  }

  /// Zephyr 5 apps set the facade's flags first, then the app group's suite: no
  /// coordinator over `UserDefaults.standard` is created on the way (it would write
  /// bookkeeping into a domain the app never syncs), and the flags reach the suite's.
  @Test func flagsSetBeforeTheSuiteCreateNoCoordinatorAndApplyToIt() {
    let harness = Harness()
    let group = harness.device("group")
    SharedFacade.withoutShared {
      Zephyr.debugEnabled = true
      Zephyr.syncUbiquitousKeyValueStoreOnChange = false
      #expect(Zephyr.debugEnabled && !Zephyr.syncUbiquitousKeyValueStoreOnChange)
      #expect(Zephyr.sharedCoordinator.withLock { $0 } == nil, "reading or setting a flag creates no coordinator")
      Zephyr.setUserDefaultsSuite(to: group.defaults, suiteName: group.suiteName)
      #expect(Zephyr.shared.domainName == group.suiteName)
      #expect(Zephyr.shared.configuration.debugEnabled)
      #expect(!Zephyr.shared.configuration.synchronizeOnChange)
    }
  }

  @Test func standardDomainIsNamedAfterTheBundleOrTheProcess() {
    let domain = UserDefaultsDomain(defaults: .standard, suiteName: nil)
    #expect(domain.name == (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName))
    #expect(!domain.name.isEmpty)
    #expect(UserDefaultsDomain(defaults: .standard, suiteName: "group.example").name == "group.example")
  }

  @Test func setUserDefaultsSuiteKeepsStoreConfigurationAndMonitoredKeys() throws {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let group = harness.device("group")
    SharedFacade.using(a.coordinator) {
      Zephyr.setUserDefaultsSuite(to: group.defaults, suiteName: group.suiteName)
      let replacement = Zephyr.shared
      #expect(replacement !== a.coordinator)
      #expect(replacement.domainName == group.suiteName)
      #expect(replacement.store === a.store)
      #expect(replacement.monitoredKeys == ["theme"])
      #expect(replacement.deviceID == "A")

      group.set(.string("from the group"), "theme")
      Zephyr.sync()
      #expect(a.record("theme")?.content == .value(.string("from the group")))
    }
  }

  @Test func typedKeysForwardToTheSharedCoordinator() async {
    let harness = Harness()
    let a = harness.device("A")
    // The facade is swapped synchronously; the stream buffers what it yields meanwhile.
    // A value replaced before its delivery may be skipped (see changes(of:)), so each
    // change is awaited before the next is made.
    let changes = SharedFacade.using(a.coordinator) { () -> AsyncStream<String> in
      let changes = Zephyr.changes(of: Keys.theme)
      Zephyr[Keys.theme] = "dusk"
      #expect(Zephyr[Keys.theme] == "dusk")
      #expect(a.defaults.string(forKey: "theme") == "dusk")
      a.settle()
      return changes
    }
    var iterator = changes.makeAsyncIterator()
    var seen: [String] = []
    while let value = await iterator.next() {
      seen.append(value)
      if value == "dusk" { break }
    }
    #expect(seen.last == "dusk")
    #expect(seen.allSatisfy { $0 == "light" || $0 == "dusk" })
    SharedFacade.using(a.coordinator) {
      Zephyr.removeValue(for: Keys.theme)
      #expect(Zephyr[Keys.theme] == "light")
      a.settle()
      #expect(a.record("theme")?.content.value == nil)
    }
    #expect(await iterator.next() == "light")
  }

  /// The initial download through the facade: the status forwards, and the wait has the
  /// coordinator's signature (a one-line forward).
  @Test func theInitialDownloadForwardsToTheSharedCoordinator() {
    let harness = Harness()
    let a = harness.device("A", initiallyDownloaded: false)
    #expect(SharedFacade.using(a.coordinator) { Zephyr.initialDownload } == .pending)
    harness.cloud.download(to: "A")
    a.settle()
    #expect(SharedFacade.using(a.coordinator) { Zephyr.initialDownload } == .done)
    let wait: (Duration) async -> InitialDownload = Zephyr.waitForInitialDownload(timeout:)
    _ = wait
  }
}

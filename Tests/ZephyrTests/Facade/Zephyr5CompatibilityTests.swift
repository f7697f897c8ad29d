import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 11, part 3: Zephyr 5.0.1 callers upgrade by changing the version. Every public
/// call of its `Sources/Zephyr.swift` (at 6acddc8) compiles and means the same.
/// Serialized: the facade is global.
@Suite(.serialized)
struct Zephyr5CompatibilityTests {
  /// Every public call of Zephyr 5.0.1, spelled as its callers spell it. Compiling this
  /// function is the test; it is also run, against a simulated device.
  private func everyZephyr5Call(_ suite: UserDefaults, _ suiteName: String) {
    Zephyr.debugEnabled = true
    Zephyr.syncUbiquitousKeyValueStoreOnChange = true
    let name: Notification.Name = Zephyr.keysDidChangeOnCloudNotification
    let userInfoKey: String = Zephyr.changedKeysUserInfoKey
    _ = (name, userInfoKey)
    Zephyr.setUserDefaultsSuite(to: suite)
    Zephyr.setUserDefaultsSuite(to: suite, suiteName: suiteName)
    Zephyr.addKeysToBeMonitored(keys: "a", "b")
    Zephyr.addKeysToBeMonitored(keys: ["c"])
    Zephyr.removeKeysFromBeingMonitored(keys: "b")
    Zephyr.removeKeysFromBeingMonitored(keys: ["c"])
    Zephyr.sync()
    Zephyr.sync(keys: "a")
    Zephyr.sync(keys: ["a"])
    Zephyr.sync(keys: [])
    Zephyr.sync(keys: "a", userDefaults: suite)
    Zephyr.sync(keys: "a", userDefaults: suite, suiteName: suiteName)
    Zephyr.sync(keys: ["a"], userDefaults: suite)
    Zephyr.sync(keys: ["a"], userDefaults: suite, suiteName: suiteName)
    Zephyr.sync(keys: [], userDefaults: suite)
    Zephyr.sync(userDefaults: suite)
    Zephyr.sync(keys: [], userDefaults: suite, suiteName: suiteName)
    Zephyr.sync(userDefaults: suite, suiteName: suiteName)
    let flags: (Bool, Bool) = (Zephyr.debugEnabled, Zephyr.syncUbiquitousKeyValueStoreOnChange)
    _ = flags
  }

  /// Observers that name the notification and its key by their strings, as Zephyr 5's
  /// callers could, keep working: the strings are Zephyr 5.0.1's.
  @Test func theNotificationAndItsKeyKeepZephyr5sStrings() {
    #expect(Zephyr.keysDidChangeOnCloudNotification.rawValue == "ZephyrKeysDidChangeOnCloudNotification")
    #expect(Zephyr.changedKeysUserInfoKey == "ZephyrChangedKeys")
  }

  @Test func everyZephyr5CallCompilesAndRuns() {
    let harness = Harness()
    let a = harness.device("A")
    SharedFacade.using(a.coordinator) {
      a.set(.string("x"), "a")
      everyZephyr5Call(a.defaults, a.suiteName)
      #expect(Zephyr.shared.domainName == a.suiteName)
      #expect(a.record("a")?.content == .value(.string("x")))
    }
  }

  /// `sync(keys: [])` reconciles the whole domain, as in 5.0.1 (it did nothing before).
  @Test func anEmptyKeyListSyncsTheWholeDomain() {
    let harness = Harness()
    let a = harness.device("A")
    SharedFacade.using(a.coordinator) {
      a.defaults.set("one", forKey: "first")
      a.defaults.set(2, forKey: "second")
      Zephyr.sync(keys: [])
      #expect(Set(a.store.cachedValues.keys) == ["first", "second"])
      a.defaults.set("three", forKey: "third")
      a.coordinator.sync(keys: [String]())
      #expect(a.record("third")?.content == .value(.string("three")))
    }
  }

  /// `sync(keys:userDefaults:suiteName:)` switches the suite, then syncs; with no keys,
  /// the whole domain of the new suite.
  @Test func syncWithASuiteSwitchesThenSyncs() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let group = harness.device("group")
    SharedFacade.using(a.coordinator) {
      group.defaults.set("grouped", forKey: "theme")
      group.defaults.set("also", forKey: "other")

      Zephyr.sync(keys: "theme", userDefaults: group.defaults, suiteName: group.suiteName)
      #expect(Zephyr.shared.domainName == group.suiteName)
      #expect(a.record("theme")?.content == .value(.string("grouped")))
      #expect(a.record("other") == nil)
      let replacement = Zephyr.shared
      Zephyr.sync(keys: [], userDefaults: group.defaults, suiteName: group.suiteName)
      #expect(Zephyr.shared === replacement, "the same suite again keeps the coordinator")
      #expect(a.record("other")?.content == .value(.string("also")))
    }
  }

  /// Zephyr 5 allowed `setUserDefaultsSuite(to:)` without a name. The suite cannot be
  /// listed then: `sync()` covers the monitored keys and those the store knows, and
  /// `status` says why.
  @Test func aSuiteWithoutItsNameSyncsTheKeysZephyrKnows() {
    let harness = Harness()
    let a = harness.device("A")
    let unnamed = harness.device("unnamed")
    SharedFacade.using(a.coordinator) {
      harness.cloud.setServerValue(.string("from the cloud"), forKey: "pulled")
      harness.cloud.download(to: "A", notify: false)
      unnamed.defaults.set("mine", forKey: "watched")
      unnamed.defaults.set("never listed", forKey: "unwatched")

      Zephyr.setUserDefaultsSuite(to: unnamed.defaults)
      #expect(Zephyr.shared.domainName == UserDefaultsDomain.unnamedSuiteName)
      #expect(Zephyr.status.notes.contains { $0.contains("suite given without its name") })
      Zephyr.addKeysToBeMonitored(keys: "watched")
      Zephyr.sync()
      #expect(a.record("watched")?.content == .value(.string("mine")))
      #expect(a.record("unwatched") == nil)
      #expect(unnamed.defaults.string(forKey: "pulled") == "from the cloud")
    }
  }
}

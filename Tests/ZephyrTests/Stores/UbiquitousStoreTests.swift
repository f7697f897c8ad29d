import Foundation
import Testing

@testable import Zephyr

/// The Apple adapter, driven through a fake of the `NSUbiquitousKeyValueStore` surface.
struct UbiquitousStoreTests {
  /// Behaves like `NSUbiquitousKeyValueStore` as far as the adapter can tell: `Any`
  /// values, Foundation types, and exceptions for over-long keys (recorded here).
  final class FakeUbiquitousStore: UbiquitousKeyValueStorage {
    var values: [String: Any] = [:]
    var exceptions = 0
    var synchronizations = 0

    func object(forKey aKey: String) -> Any? { values[aKey] }
    func set(_ anObject: Any?, forKey aKey: String) {
      guard aKey.utf8.count <= 64 else {
        exceptions += 1
        return
      }
      values[aKey] = anObject
    }
    func removeObject(forKey aKey: String) { values[aKey] = nil }
    var dictionaryRepresentation: [String: Any] { values }
    func synchronize() -> Bool {
      synchronizations += 1
      return true
    }
  }

  @Test func convertsValuesBothWays() {
    let fake = FakeUbiquitousStore()
    let store = UbiquitousStore(fake, notificationCenter: NotificationCenter())
    let record = PropertyListValue.array([.string("z1"), .integer(3), .string("ab"), .dictionary(["x": .double(1.5)])])
    store.setValue(record, forKey: "theme")
    #expect(store.value(forKey: "theme") == record)
    #expect(store.allValues() == ["theme": record])
    fake.values["native"] = NSNumber(value: true)
    #expect(store.value(forKey: "native") == .bool(true))
    store.removeValue(forKey: "theme")
    #expect(store.value(forKey: "theme") == nil)
    #expect(store.synchronize())
    #expect(fake.synchronizations == 1)
  }

  @Test func neverSendsAnOverLongKey() {
    let fake = FakeUbiquitousStore()
    let store = UbiquitousStore(fake, notificationCenter: NotificationCenter())
    let key = String(repeating: "k", count: 65)
    store.setValue(.integer(1), forKey: key)
    store.removeValue(forKey: key)
    #expect(store.value(forKey: key) == nil)
    #expect(fake.exceptions == 0)
  }

  static var events: [(String, [AnyHashable: Any]?, ExternalChange)] {
    [
      (
        "server change",
        [
          "NSUbiquitousKeyValueStoreChangeReasonKey": NSNumber(value: 0),
          "NSUbiquitousKeyValueStoreChangedKeysKey": ["a", "b"],
        ], ExternalChange(reason: .serverChange, keys: ["a", "b"])
      ),
      (
        "initial sync", ["NSUbiquitousKeyValueStoreChangeReasonKey": 1], ExternalChange(reason: .initialSync, keys: nil)
      ),
      ("quota", ["NSUbiquitousKeyValueStoreChangeReasonKey": 2], ExternalChange(reason: .quotaViolation, keys: nil)),
      (
        "account",
        [
          "NSUbiquitousKeyValueStoreChangeReasonKey": NSNumber(value: 3),
          "NSUbiquitousKeyValueStoreChangedKeysKey": ["a"],
        ], ExternalChange(reason: .accountChange, keys: ["a"])
      ),
      (
        "unknown reason", ["NSUbiquitousKeyValueStoreChangeReasonKey": 99],
        ExternalChange(reason: .serverChange, keys: nil)
      ),
      (
        "garbage keys",
        ["NSUbiquitousKeyValueStoreChangeReasonKey": "x", "NSUbiquitousKeyValueStoreChangedKeysKey": 5],
        ExternalChange(reason: .serverChange, keys: nil)
      ),
      ("no user info", nil, ExternalChange(reason: .serverChange, keys: nil)),
    ]
  }

  @Test(arguments: [
    "server change", "initial sync", "quota", "account", "unknown reason", "garbage keys", "no user info",
  ])
  func turnsNotificationsIntoChanges(_ name: String) throws {
    let event = try #require(Self.events.first { $0.0 == name })
    let fake = FakeUbiquitousStore()
    let center = NotificationCenter()
    let store = UbiquitousStore(fake, notificationCenter: center)
    let received = Locked<[ExternalChange]>([])
    let token = store.observeExternalChanges { change in received.withLock { $0.append(change) } }

    center.post(name: UbiquitousNotificationNames.ubiquitous.didChangeExternally, object: fake, userInfo: event.1)
    center.post(name: UbiquitousNotificationNames.ubiquitous.didChangeExternally, object: NSObject(), userInfo: event.1)
    #expect(received.withLock { $0 } == [event.2], "only the store's own notifications count")

    token.cancel()
    center.post(name: UbiquitousNotificationNames.ubiquitous.didChangeExternally, object: fake, userInfo: event.1)
    #expect(received.withLock { $0.count } == 1, "a cancelled token stops the observation")
  }

  @Test func coordinatorSyncsThroughTheAdapter() {
    let fake = FakeUbiquitousStore()
    let center = NotificationCenter()
    let store = UbiquitousStore(fake, notificationCenter: center)
    let suiteName = "zephyr-tests.adapter.\(UUID().uuidString)"
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(suiteName)
    guard let defaults = UserDefaults(suiteName: suiteName) else { return }
    defer {
      defaults.removePersistentDomain(forName: suiteName)
      try? FileManager.default.removeItem(at: directory)
    }
    let coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: store,
      configuration: SyncConfiguration(deviceID: "dev", logHandler: { _ in }, ledgerDirectory: directory))
    #expect(fake.synchronizations == 1, "synchronize() at launch, as Apple recommends")
    coordinator.addKeysToBeMonitored(keys: "theme")
    defaults.set("dusk", forKey: "theme")
    coordinator.sync()
    #expect(fake.values["theme"] != nil)
    #expect(fake.synchronizations == 2, "and once after the batch that wrote")

    // Another device's write arrives as Apple delivers it.
    fake.values["theme"] = ["z1", 9, "other", "dawn"] as [Any]
    center.post(
      name: UbiquitousNotificationNames.ubiquitous.didChangeExternally, object: fake,
      userInfo: ["NSUbiquitousKeyValueStoreChangeReasonKey": 0, "NSUbiquitousKeyValueStoreChangedKeysKey": ["theme"]])
    #expect(defaults.string(forKey: "theme") == "dawn")
  }
}

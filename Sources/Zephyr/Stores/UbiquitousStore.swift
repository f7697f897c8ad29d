import Foundation

/// The part of `NSUbiquitousKeyValueStore` that ``UbiquitousStore`` uses.
///
/// `NSUbiquitousKeyValueStore` conforms on Apple platforms. A fake of this surface tests
/// the adapter on every platform.
protocol UbiquitousKeyValueStorage: AnyObject {
  /// The object stored for `aKey`, or `nil`.
  func object(forKey aKey: String) -> Any?
  /// Stores `anObject` for `aKey`.
  func set(_ anObject: Any?, forKey aKey: String)
  /// Removes the value for `aKey`.
  func removeObject(forKey aKey: String)
  /// Every key and value.
  var dictionaryRepresentation: [String: Any] { get }
  /// Persists in-memory changes; `false` when the app cannot use iCloud.
  func synchronize() -> Bool
}

/// The names under which a ``UbiquitousKeyValueStorage`` announces external changes.
struct UbiquitousNotificationNames: Sendable, Hashable {
  /// The notification posted for an external change.
  var didChangeExternally: Notification.Name
  /// The `userInfo` key of the reason, an integer 0–3.
  var reasonKey: String
  /// The `userInfo` key of the changed keys, an array of strings.
  var changedKeysKey: String
}

#if canImport(Darwin)
  extension NSUbiquitousKeyValueStore: UbiquitousKeyValueStorage {}

  extension UbiquitousNotificationNames {
    /// `NSUbiquitousKeyValueStore`'s notification and `userInfo` keys.
    static let ubiquitous = UbiquitousNotificationNames(
      didChangeExternally: NSUbiquitousKeyValueStore.didChangeExternallyNotification,
      reasonKey: NSUbiquitousKeyValueStoreChangeReasonKey,
      changedKeysKey: NSUbiquitousKeyValueStoreChangedKeysKey)
  }

  extension UbiquitousStore {
    /// The app's iCloud key-value store, `NSUbiquitousKeyValueStore.default`.
    public static let `default` = UbiquitousStore(NSUbiquitousKeyValueStore.default)

    /// Whether `FileManager.ubiquityIdentityToken` shows a signed-in iCloud account: Apple
    /// documents a `nil` token as "iCloud is unavailable or there is no logged-in user",
    /// which is what apps count as signed out (and what
    /// ``SyncMetrics/launchesSignedOut`` counts). The token belongs to iCloud Drive: with
    /// iCloud Drive turned off it is `nil` too while key-value sync may still work, so a
    /// `false` here is "no account, or no iCloud Drive". Whether the store is usable shows
    /// in ``SyncStatus/lastSynchronizeSucceeded``.
    public var isSignedIn: Bool? { FileManager.default.ubiquityIdentityToken != nil }
  }

  extension Zephyr {
    static func makeDefaultStore() -> any KeyValueSyncStore { UbiquitousStore.default }
  }
#else
  extension UbiquitousNotificationNames {
    /// `NSUbiquitousKeyValueStore`'s notification and `userInfo` keys, by their
    /// documented string values (the class itself exists only on Apple platforms).
    static let ubiquitous = UbiquitousNotificationNames(
      didChangeExternally: Notification.Name("NSUbiquitousKeyValueStoreDidChangeExternallyNotification"),
      reasonKey: "NSUbiquitousKeyValueStoreChangeReasonKey",
      changedKeysKey: "NSUbiquitousKeyValueStoreChangedKeysKey")
  }

  extension Zephyr {
    /// No iCloud here: the shared coordinator keeps values in process until
    /// ``Zephyr/shared`` is replaced.
    static func makeDefaultStore() -> any KeyValueSyncStore { ProcessLocalStore() }
  }
#endif

/// A ``KeyValueSyncStore`` over `NSUbiquitousKeyValueStore` (`UbiquitousStore.default` on
/// Apple platforms).
///
/// A thin adapter: it converts values to and from ``PropertyListValue``, refuses keys
/// longer than 64 UTF-8 bytes instead of letting the store raise an exception, and turns
/// the store's external-change notification into ``ExternalChange`` values. A missing or
/// unknown reason is reported as ``ExternalChange/Reason/serverChange``; a key list that
/// is not an array of strings as `nil` ("all keys").
///
/// > Important: Enable the *iCloud → Key-value storage* capability, which adds the
/// > `com.apple.developer.ubiquity-kvstore-identifier` entitlement; without it every
/// > `synchronize()` returns `false` and nothing syncs.
public final class UbiquitousStore: KeyValueSyncStore {
  /// Called without a lock of ours (see <doc:Threading>): `NSUbiquitousKeyValueStore`
  /// synchronizes itself; Zephyr only ever serialises its own operations, never the store's.
  nonisolated(unsafe) private let storage: any UbiquitousKeyValueStorage
  private let notificationCenter: NotificationCenter
  private let names: UbiquitousNotificationNames
  private let maximumKeyBytes = StoreLimits.iCloud.maximumKeyBytes

  /// Creates an adapter over `storage`, observing `names.didChangeExternally` posted by
  /// `storage` on `notificationCenter`.
  init(
    _ storage: some UbiquitousKeyValueStorage, notificationCenter: NotificationCenter = .default,
    names: UbiquitousNotificationNames = .ubiquitous
  ) {
    self.storage = storage
    self.notificationCenter = notificationCenter
    self.names = names
  }

  /// The stored value for `key`, bridged to a ``PropertyListValue``; `nil` when there is
  /// none, when it is not a property-list value, or when `key` is longer than 64 UTF-8
  /// bytes (it is never passed to the store).
  public func value(forKey key: String) -> PropertyListValue? {
    LockAudit.assertNoLockHeld(calling: "NSUbiquitousKeyValueStore")
    guard key.utf8.count <= maximumKeyBytes else { return nil }
    let raw = storage.object(forKey: key)
    return raw.flatMap(PropertyListValue.init(bridging:))
  }

  /// Every key of the store's `dictionaryRepresentation` whose value bridges to a
  /// ``PropertyListValue``; other values are left out.
  public func allValues() -> [String: PropertyListValue] {
    LockAudit.assertNoLockHeld(calling: "NSUbiquitousKeyValueStore")
    let raw = storage.dictionaryRepresentation
    return raw.compactMapValues(PropertyListValue.init(bridging:))
  }

  /// Stores ``PropertyListValue/foundationValue`` for `key`. A key longer than 64 UTF-8
  /// bytes is ignored instead of being passed on, where the store would raise an
  /// exception.
  public func setValue(_ value: PropertyListValue, forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "NSUbiquitousKeyValueStore")
    guard key.utf8.count <= maximumKeyBytes else { return }
    storage.set(value.foundationValue, forKey: key)
  }

  /// Removes the value for `key`; a key longer than 64 UTF-8 bytes is ignored.
  public func removeValue(forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "NSUbiquitousKeyValueStore")
    guard key.utf8.count <= maximumKeyBytes else { return }
    storage.removeObject(forKey: key)
  }

  /// Calls the store's `synchronize()`: `false` when the app cannot use iCloud (no
  /// account, or no key-value storage entitlement).
  @discardableResult
  public func synchronize() -> Bool {
    LockAudit.assertNoLockHeld(calling: "NSUbiquitousKeyValueStore")
    return storage.synchronize()
  }

  /// Observes the store's external-change notification and calls `handler` with each
  /// change, on the thread that posted it, until the token is cancelled or released.
  public func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
    let names = self.names
    let center = notificationCenter
    return .observing(names.didChangeExternally, from: storage, on: center) { note in
      handler(Self.change(from: note.userInfo, names: names))
    }
  }

  /// Reads a change out of the notification's `userInfo`, whatever it holds.
  static func change(from userInfo: [AnyHashable: Any]?, names: UbiquitousNotificationNames) -> ExternalChange {
    let rawReason: Int? =
      switch userInfo?[names.reasonKey] {
      case let number as NSNumber: number.intValue
      case let number as Int: number
      default: nil
      }
    let reason = rawReason.flatMap(ExternalChange.Reason.init(rawValue:)) ?? .serverChange
    let keys = userInfo?[names.changedKeysKey] as? [String]
    return ExternalChange(reason: reason, keys: keys)
  }
}

/// The shared coordinator's store where there is no iCloud: values live in this process.
final class ProcessLocalStore: KeyValueSyncStore {
  private let values = Locked<[String: PropertyListValue]>([:])

  func value(forKey key: String) -> PropertyListValue? { values.withLock { $0[key] } }
  func allValues() -> [String: PropertyListValue] { values.withLock { $0 } }
  func setValue(_ value: PropertyListValue, forKey key: String) { values.withLock { $0[key] = value } }
  func removeValue(forKey key: String) { values.withLock { $0[key] = nil } }
  func synchronize() -> Bool { true }
  func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
    ObservationToken {}
  }
}

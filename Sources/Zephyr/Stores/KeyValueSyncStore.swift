import Foundation

/// A key-value store that syncs between a person's devices: the role
/// `NSUbiquitousKeyValueStore` plays on Apple platforms.
///
/// Zephyr talks to the store only through this protocol, so the engine is tested against
/// `ZephyrTesting.SimulatedCloud` and runs on Apple platforms over ``UbiquitousStore``.
///
/// Contract for implementers:
/// - Reads and writes are local and cheap; syncing with a server happens on its own.
/// - Writes of over-long keys or over-quota values are refused without throwing.
/// - External changes are reported to every observer registered with
///   ``observeExternalChanges(_:)``, on any thread. An observer may be called while a
///   write of the same store is in progress on the same thread.
/// - Every method may be called from any thread.
public protocol KeyValueSyncStore: AnyObject, Sendable {
  /// The value stored for `key`, or `nil` when there is none.
  func value(forKey key: String) -> PropertyListValue?
  /// Every key and value in the store.
  func allValues() -> [String: PropertyListValue]
  /// Stores `value` for `key`, replacing what was there.
  func setValue(_ value: PropertyListValue, forKey key: String)
  /// Removes the value for `key`, if any.
  func removeValue(forKey key: String)
  /// Asks the store to persist and exchange pending changes; returns `false` when it
  /// could not (for iCloud: no account, or the app lacks the entitlement).
  @discardableResult func synchronize() -> Bool
  /// Calls `handler` for every external change until the returned token is cancelled
  /// or released.
  func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken
  /// Whether the device is signed into the account the store syncs with; `nil` when the
  /// store cannot tell. The default implementation returns `nil`.
  var isSignedIn: Bool? { get }
  /// The limits the store enforces, which a coordinator checks before every write unless
  /// its ``SyncConfiguration/limits`` are set. The default implementation returns
  /// ``StoreLimits/iCloud``.
  var limits: StoreLimits { get }
  /// The latest time the server lost every value at once and the store answered by its
  /// policy (see ``StoreReset``); `nil` when it never did. A coordinator shows it as
  /// ``SyncStatus/lastStoreReset``. The default implementation returns `nil`: the
  /// key-value store reports no such thing.
  var lastReset: StoreReset? { get }
}

extension KeyValueSyncStore {
  /// `nil`: the store cannot tell.
  public var isSignedIn: Bool? { nil }

  /// ``StoreLimits/iCloud``: the key-value store's limits.
  public var limits: StoreLimits { .iCloud }

  /// `nil`: the store reports no reset.
  public var lastReset: StoreReset? { nil }
}

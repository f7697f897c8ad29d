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
}

extension KeyValueSyncStore {
  /// `nil`: the store cannot tell.
  public var isSignedIn: Bool? { nil }
}

/// A change that reached a ``KeyValueSyncStore`` from outside this process.
public struct ExternalChange: Sendable, Hashable {
  /// Why the store changed; mirrors `NSUbiquitousKeyValueStoreChangeReasonKey`.
  public enum Reason: Int, Sendable, Hashable, CaseIterable {
    /// Another device changed values on the server (`NSUbiquitousKeyValueStoreServerChange`, 0).
    case serverChange = 0
    /// The first download after launch (`NSUbiquitousKeyValueStoreInitialSyncChange`, 1).
    case initialSync = 1
    /// The app exceeded its quota; some writes were dropped
    /// (`NSUbiquitousKeyValueStoreQuotaViolationChange`, 2).
    case quotaViolation = 2
    /// The iCloud account changed; the store now holds another account's values
    /// (`NSUbiquitousKeyValueStoreAccountChange`, 3).
    case accountChange = 3
  }

  /// Why the store changed.
  public var reason: Reason
  /// The keys that changed, or `nil` when the store did not say (treated as "all").
  public var keys: [String]?

  /// Creates a change event.
  public init(reason: Reason, keys: [String]?) {
    self.reason = reason
    self.keys = keys
  }
}

/// Keeps an observation alive; cancelling or releasing it stops the observation.
public final class ObservationToken: Sendable {
  private let cancellation: Locked<(@Sendable () -> Void)?>

  /// Creates a token that runs `cancel` once, on ``cancel()`` or when released.
  public init(cancel: @escaping @Sendable () -> Void) {
    cancellation = Locked(cancel)
  }

  /// Stops the observation. Later calls do nothing.
  public func cancel() {
    let action = cancellation.withLock { action -> (@Sendable () -> Void)? in
      defer { action = nil }
      return action
    }
    action?()
  }

  deinit {
    cancel()
  }
}

/// The limits a key-value sync store enforces, which Zephyr checks before every write.
///
/// See <doc:LimitsAndDiagnostics>.
public struct StoreLimits: Sendable, Hashable {
  /// Total bytes: every key's UTF-8 bytes plus every value's binary-plist size.
  public var maximumTotalBytes: Int
  /// Number of keys.
  public var maximumKeyCount: Int
  /// UTF-8 bytes in one key.
  public var maximumKeyBytes: Int

  /// Creates limits.
  public init(maximumTotalBytes: Int, maximumKeyCount: Int, maximumKeyBytes: Int) {
    self.maximumTotalBytes = maximumTotalBytes
    self.maximumKeyCount = maximumKeyCount
    self.maximumKeyBytes = maximumKeyBytes
  }

  /// The iCloud key-value store's documented limits: 1 MB, 1,024 keys, 64-byte keys.
  public static let iCloud = StoreLimits(maximumTotalBytes: 1_048_576, maximumKeyCount: 1_024, maximumKeyBytes: 64)
}

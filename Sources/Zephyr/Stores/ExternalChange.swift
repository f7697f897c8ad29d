import Foundation

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

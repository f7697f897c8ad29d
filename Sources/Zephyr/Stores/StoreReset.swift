import Foundation

/// The server lost every value of the store at once, and the store answered by its stated
/// policy: what happened, when the device learned of it, and what the store did.
///
/// The key-value store never reports one; `CloudKitStore` does (see
/// <doc:BeyondOneMegabyteWithCloudKit>). In each case this device's `UserDefaults` values
/// are kept. Read it from ``SyncStatus/lastStoreReset``:
///
/// ```swift
/// if let reset = coordinator.status.lastStoreReset, reset.reason == .purged {
///   showSyncPausedBanner()  // the user deleted the app's iCloud data in Settings
/// }
/// ```
public struct StoreReset: Sendable, Hashable, CustomStringConvertible {
  /// Why the server's values are gone.
  public enum Reason: Sendable, Hashable, CaseIterable {
    /// Something other than the user (another version of the app, a tool) deleted the
    /// store's zone. The store created it again and sent this device's values again.
    case zoneDeleted
    /// The user deleted the app's iCloud data in Settings. As Apple asks, the store sends
    /// nothing again until the app calls `CloudKitStore.resumeAfterPurge()`, for
    /// example when the user turns syncing back on.
    case purged
    /// The user reset their encrypted iCloud data, which the store's records are kept in.
    /// The store created its zone again and sent this device's values again.
    case encryptedDataReset
  }

  /// Why the server's values are gone.
  public var reason: Reason
  /// When the store learned of it, by the store's clock.
  public var date: Date

  /// A reset for `reason`, learned of at `date`.
  public init(reason: Reason, date: Date) {
    self.reason = reason
    self.date = date
  }

  /// What happened and what the store did, in one line.
  public var description: String {
    let when = date.ISO8601Format()
    return switch reason {
    case .zoneDeleted: "zone deleted at \(when): local values kept and sent again"
    case .purged: "iCloud data deleted by the user at \(when): local values kept, nothing sent until resumed"
    case .encryptedDataReset: "encrypted data reset at \(when): local values kept and sent again"
    }
  }
}

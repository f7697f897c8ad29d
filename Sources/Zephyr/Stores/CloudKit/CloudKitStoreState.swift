import Foundation

/// Everything a CloudKit store keeps on disk, saved as one file, atomically: the engine's
/// state serialization, the last server version of each record, the queue of unsent
/// changes, and the store's policies in force. A crash at any point finds either the
/// state before an event or the state after it, never half of each.
package struct CloudKitStoreState: Sendable, Equatable {
  /// A local change not yet accepted by the server: the value to save (`nil`: delete the
  /// record), numbered in write order.
  package struct Pending: Sendable, Equatable {
    package var key: String
    package var value: PropertyListValue?
    package var sequence: UInt64
  }

  /// The engine's state serialization (`CKSyncEngine.State.Serialization`), as it gave it.
  package var engineState: Data?
  /// The last version of each record the server confirmed (saved or fetched), by name.
  package var server: [String: MirrorRecord] = [:]
  /// Per record name, the highest generation of a Zephyr record of it that the server
  /// confirmed (saved or fetched). An unsent record at or below it publishes again a
  /// write the server had; one above it is a new write.
  package var generations: [String: UInt64] = [:]
  /// Unsent changes, by record name.
  package var pending: [String: Pending] = [:]
  /// The last write's number.
  package var sequence: UInt64 = 0
  /// Whether a fetch has completed in the current account: until then nothing is sent,
  /// so that a new install's or a new account's first writes never race the cloud's
  /// values (they are merged with them instead).
  package var hasFetched = false
  /// Whether the first fetch of the current account reports an `accountChange` (after
  /// a sign-in or a switch) rather than an `initialSync`.
  package var reportsAccountChange = false
  /// Whether the zone must be saved (created again) before records are sent.
  package var needsZone = true
  /// Whether the user purged the app's data: nothing is sent until the app resumes.
  package var pausedAfterPurge = false
  /// The latest time the server lost the zone, and why.
  package var lastReset: StoreReset?
  /// While the account's storage is full: when sends may be tried again.
  package var quotaRetryDate: Date?
  /// The wait after the next quota error; doubles up to an hour, and is reset by a
  /// successful save.
  package var quotaBackoff: TimeInterval = CloudKitStoreState.initialQuotaBackoff

  /// The first wait after a quota error.
  package static let initialQuotaBackoff: TimeInterval = 60
  /// The longest wait after quota errors.
  package static let maximumQuotaBackoff: TimeInterval = 3_600

  package init() {}

  /// The current value of each record name's key: an unsent change, else the server's.
  func value(named name: String) -> PropertyListValue? {
    if let change = pending[name] { return change.value }
    return server[name].flatMap { CloudKitPayload.decode($0.payload) }
  }

  /// The changes the engine is to send, in write order.
  var pendingChanges: [PendingRecordChange] {
    pending.sorted { $0.value.sequence < $1.value.sequence }
      .map { $0.value.value == nil ? .delete($0.key) : .save($0.key) }
  }
}

/// Where a CloudKit store keeps its state: a file beside the ledger, replaced atomically.
package protocol CloudKitStatePersistence: Sendable {
  /// The saved state, or `nil` when there is none or it cannot be read.
  func load() -> CloudKitStoreState?
  /// Saves `state` atomically; `false` when it could not.
  func save(_ state: CloudKitStoreState) -> Bool
}

/// The state in a file, written atomically (a new file renamed over the old one).
package struct CloudKitStateFile: CloudKitStatePersistence {
  /// The file.
  package let url: URL

  package init(url: URL) {
    self.url = url
  }

  package func load() -> CloudKitStoreState? {
    guard let data = try? Data(contentsOf: url) else { return nil }
    return try? CloudKitStateCodec.decode(data)
  }

  package func save(_ state: CloudKitStoreState) -> Bool {
    do {
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try CloudKitStateCodec.encode(state).write(to: url, options: .atomic)
      return true
    } catch {
      return false
    }
  }
}

import Foundation

/// The CloudKit store's core, in plain Swift: one record per key in one custom zone, the
/// local copies of the records, the queue of unsent changes and the engine's state, saved
/// together before any event handler returns; and the policies for every event a
/// `CKSyncEngine` sends. `CloudKitStore` (Apple platforms) and
/// `ZephyrTesting.SimulatedCloudKit` put an engine in front of it.
///
/// It answers the ``KeyValueSyncStore`` calls, so a coordinator runs over it unchanged:
/// reads and writes are local; ``synchronize()`` saves the state and hands the queue to
/// the engine. No save ever overwrites a server version the store has not seen: a
/// conflict (`serverRecordChanged`) makes the server's version the store's value and is
/// reported as a `serverChange`, so the coordinator merges it and writes the result,
/// which is sent again (over a foreign value, a last-writer-wins record is sent again at
/// once, naming it: see ``ForeignName``).
package final class CloudKitStoreCore: Sendable {
  /// The largest record CloudKit takes: the key's bytes and the payload's.
  package static let maximumRecordBytes = 1_048_576

  private let state: Locked<CloudKitStoreRuntime>
  private let persistence: any CloudKitStatePersistence
  private let driver: any CloudKitSyncEngineDriver
  private let clock: @Sendable () -> Date
  private let notify: @Sendable (ExternalChange) -> Void

  /// A core with the state `persistence` holds (or a fresh one), feeding `driver`;
  /// `notify` receives every external change, with no lock held.
  package init(
    persistence: any CloudKitStatePersistence, driver: any CloudKitSyncEngineDriver,
    clock: @escaping @Sendable () -> Date = { Date() }, notify: @escaping @Sendable (ExternalChange) -> Void
  ) {
    self.persistence = persistence
    self.driver = driver
    self.clock = clock
    self.notify = notify
    state = Locked(CloudKitStoreRuntime(saved: persistence.load() ?? CloudKitStoreState()))
  }

  /// The engine's state serialization saved with the store's state, for creating the
  /// engine at launch.
  package var engineState: Data? { state.withLock { $0.saved.engineState } }

  /// A copy of the saved-or-current state, for tests and diagnostics.
  package var currentState: CloudKitStoreState { state.withLock { $0.saved } }

  /// Whether nothing is sent because the user purged the app's iCloud data.
  package var isPausedAfterPurge: Bool { state.withLock { $0.saved.pausedAfterPurge } }

  /// The latest time the server lost the zone, and what the store did.
  package var lastReset: StoreReset? { state.withLock { $0.saved.lastReset } }

  /// The keys with unsent changes, sorted.
  package var pendingKeys: [String] { state.withLock { $0.saved.pending.values.map(\.key).sorted() } }

  // MARK: The key-value store's calls

  /// The key's current value: its unsent change, else the server's last version.
  package func value(forKey key: String) -> PropertyListValue? {
    state.withLock { $0.values[key] }
  }

  /// Every key's current value.
  package func allValues() -> [String: PropertyListValue] {
    state.withLock { $0.values }
  }

  /// Queues a save of the key's record. A record over CloudKit's 1 MB, or a key whose
  /// record name another key holds, is refused: nothing changes and a `quotaViolation`
  /// names the key.
  package func setValue(_ value: PropertyListValue, forKey key: String) {
    let now = clock()
    let effects = state.withLock { $0.write(value, forKey: key, now: now) }
    apply(effects)
  }

  /// Queues a deletion of the key's record (or drops an unsent save of a record the
  /// server never had).
  package func removeValue(forKey key: String) {
    let now = clock()
    let effects = state.withLock { $0.write(nil, forKey: key, now: now) }
    apply(effects)
  }

  /// Saves the state and hands every change that may be sent to the engine (those held
  /// by a quota backoff whose time has come, too). `false` when the state could not be
  /// saved.
  @discardableResult
  package func synchronize() -> Bool {
    let now = clock()
    let (saved, effects) = state.withLock { runtime in
      var effects = runtime.release(now: now)
      let saved = persistence.save(runtime.saved)
      if !saved { effects = CloudKitEffects() }
      return (saved, effects)
    }
    apply(effects)
    return saved
  }

  /// Lifts the pause a purge started: the app chose to send this device's values again.
  package func resumeAfterPurge() {
    state.withLock { $0.saved.pausedAfterPurge = false }
    synchronize()
  }

  // MARK: The engine's calls

  /// Handles one engine event, saves the state, then tells the engine and the observers
  /// what changed. When the state cannot be saved (a crash, a full disk), nothing is told:
  /// the saved state is the one before the event, which the engine repeats.
  package func handle(_ event: CloudKitSyncEvent) {
    let now = clock()
    let effects: CloudKitEffects? = state.withLock { runtime in
      var effects = runtime.handle(event, now: now)
      effects.merge(runtime.release(now: now))
      return persistence.save(runtime.saved) ? effects : nil
    }
    if let effects { apply(effects) }
  }

  /// The records and deletions to send for the first `limit` of the engine's pending
  /// changes, or `nil` when nothing is to be sent now (before the first fetch, while the
  /// quota backs off, after a purge).
  package func nextBatch(from pending: [PendingRecordChange], limit: Int = 400) -> RecordChangeBatch? {
    let now = clock()
    let (batch, effects) = state.withLock { $0.batch(from: pending, limit: limit, now: now) }
    apply(effects)
    return batch
  }

  private func apply(_ effects: CloudKitEffects) {
    if effects.zoneSave { driver.addZoneSave() }
    if !effects.removed.isEmpty { driver.remove(effects.removed) }
    if !effects.added.isEmpty { driver.add(effects.added) }
    for change in effects.notifications { notify(change) }
  }
}

/// What a change of the core's state asks for once the lock is released.
struct CloudKitEffects {
  var added: [PendingRecordChange] = []
  var removed: [PendingRecordChange] = []
  var zoneSave = false
  var notifications: [ExternalChange] = []

  mutating func merge(_ other: CloudKitEffects) {
    added += other.added
    removed += other.removed
    zoneSave = zoneSave || other.zoneSave
    notifications += other.notifications
  }
}

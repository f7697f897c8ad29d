import Foundation
import Zephyr

/// One device's store on a ``SimulatedCloudKit``: a `KeyValueSyncStore` over the same
/// core as `CloudKitStore`, fed by a simulated `CKSyncEngine`.
///
/// Writes are local and queued; the queue, the record copies and the engine's state are
/// saved in a file (``SimulatedCloudKit/directory``) whenever an event is handled and on
/// ``synchronize()``. A ``SimulatedCloudKit/crash(_:before:)`` drops what the process
/// held in memory and starts the device again from that file.
public final class SimulatedCloudKitDevice: KeyValueSyncStore {
  /// What the device sent and was asked to do, for assertions and benchmarks.
  public struct Statistics: Sendable, Equatable {
    /// Accepted `setValue` and `removeValue` calls.
    public var writes = 0
    /// `synchronize()` calls.
    public var synchronizeCalls = 0
    /// Requests that sent records or deletions to the server.
    public var requests = 0
    /// Record saves and deletions sent, accepted or not.
    public var recordsSent = 0
    /// Bytes of the records sent: key names and payloads.
    public var bytesSent = 0
    /// `quotaViolation` events the device posted.
    public var quotaViolations = 0
    /// Times the device was restarted after a crash.
    public var crashes = 0
  }

  /// The device's name.
  public let name: String
  /// ``StoreLimits/cloudKit``: no total or key-count cap, 1,000,000 bytes a record.
  public let limits = StoreLimits.cloudKit
  let persistence: CrashablePersistence
  private let parts: Locked<(core: CloudKitStoreCore, engine: SimulatedSyncEngine)?> = Locked(nil)
  private let observers = Locked<[UUID: @Sendable (ExternalChange) -> Void]>([:])
  let counters = Locked(Statistics())
  /// Set while one call's events are not to reach the observers (a dropped notification).
  let muted = Locked(false)

  init(name: String, stateFile: URL, clock: @escaping @Sendable () -> Date) {
    self.name = name
    persistence = CrashablePersistence(url: stateFile)
    start(clock: clock)
  }

  /// Starts the device from its state file, as an app launch does: the engine is made
  /// from the saved serialization and given the saved queue again.
  func start(clock: @escaping @Sendable () -> Date) {
    let saved = persistence.load()
    let engine = SimulatedSyncEngine(serialization: saved?.engineState)
    let core = CloudKitStoreCore(persistence: persistence, driver: engine, clock: clock) { [weak self] change in
      self?.post(change)
    }
    parts.withLock { $0 = (core, engine) }
    core.synchronize()
  }

  var core: CloudKitStoreCore {
    guard let parts = parts.withLock({ $0 }) else { preconditionFailure("device \(name) was not started") }
    return parts.core
  }

  var engine: SimulatedSyncEngine {
    guard let parts = parts.withLock({ $0 }) else { preconditionFailure("device \(name) was not started") }
    return parts.engine
  }

  func post(_ change: ExternalChange) {
    if change.reason == .quotaViolation { counters.withLock { $0.quotaViolations += 1 } }
    guard !muted.withLock({ $0 }) else { return }
    let handlers = observers.withLock { Array($0.values) }
    for handler in handlers { handler(change) }
  }

  /// What the device sent and was asked to do so far.
  public var statistics: Statistics { counters.withLock { $0 } }

  /// The device's current values: unsent changes, else the server versions it knows.
  public var cachedValues: [String: PropertyListValue] { core.allValues() }

  /// The keys with changes the server has not accepted yet, sorted.
  public var pendingKeys: [String] { core.pendingKeys }

  /// Whether the device sends nothing because the user purged the app's iCloud data
  /// (see ``resumeAfterPurge()``).
  public var isPausedAfterPurge: Bool { core.isPausedAfterPurge }

  /// The latest time the server lost the zone (deleted, purged, encrypted data reset),
  /// and what the device's store did; `nil` when it never did.
  public var lastReset: StoreReset? { core.lastReset }

  /// Sends this device's values again after a purge: what an app does when the user
  /// turns syncing back on.
  public func resumeAfterPurge() { core.resumeAfterPurge() }

  /// The key's current value.
  public func value(forKey key: String) -> PropertyListValue? {
    LockAudit.assertNoLockHeld(calling: "the store")
    return core.value(forKey: key)
  }

  /// Every key's current value.
  public func allValues() -> [String: PropertyListValue] {
    LockAudit.assertNoLockHeld(calling: "the store")
    return core.allValues()
  }

  /// Queues a save of the key's record; the next ``SimulatedCloudKit/upload(from:)``
  /// sends it. A record over 1 MB is refused with a `quotaViolation`.
  public func setValue(_ value: PropertyListValue, forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "the store")
    counters.withLock { $0.writes += 1 }
    core.setValue(value, forKey: key)
  }

  /// Queues a deletion of the key's record.
  public func removeValue(forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "the store")
    counters.withLock { $0.writes += 1 }
    core.removeValue(forKey: key)
  }

  /// Saves the device's state and hands its queue to its engine; `false` when the state
  /// could not be saved.
  @discardableResult
  public func synchronize() -> Bool {
    LockAudit.assertNoLockHeld(calling: "the store")
    counters.withLock { $0.synchronizeCalls += 1 }
    return core.synchronize()
  }

  /// Calls `handler` for every event the device's store posts, on the thread
  /// ``SimulatedCloudKit``'s delivery says, until the token is cancelled or released.
  public func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
    let id = UUID()
    observers.withLock { $0[id] = handler }
    return ObservationToken { [observers] in
      observers.withLock { _ = $0.removeValue(forKey: id) }
    }
  }
}

#if canImport(CloudKit)
  import CloudKit
  import Foundation

  /// A ``KeyValueSyncStore`` over CloudKit's private database, through `CKSyncEngine`:
  /// no total or key-count cap, 1 MB a record (``StoreLimits/cloudKit``). Apple platforms
  /// only; see <doc:BeyondOneMegabyteWithCloudKit>.
  ///
  /// ```swift
  /// let store = CloudKitStore(containerIdentifier: "iCloud.com.example.app")
  /// let coordinator = SyncCoordinator(defaults: .standard, store: store)
  /// coordinator.sync()
  /// ```
  ///
  /// Each key is one record in the custom zone `Zephyr`, holding the key's Zephyr record
  /// in an encrypted field, so merges, strategies and compression work as over the
  /// key-value store. The store's record copies, its queue of unsent changes and the
  /// engine's state are saved in one file, atomically, before each engine event returns:
  /// a crash loses no queued change. A save over a version the device has not seen comes
  /// back as a `serverChange` with the server's version, which the coordinator merges and
  /// writes again. Quota errors are reported as `quotaViolation` and retried after a
  /// backoff; a lost zone is created again and refilled; a purge (the user deleted the
  /// app's data in Settings) pauses sending until ``resumeAfterPurge()``; account changes
  /// are reported as `accountChange`, and a sign-out changes no `UserDefaults` value.
  ///
  /// The app needs the iCloud capability with CloudKit, the container, and the Remote
  /// notifications background mode (the engine's push subscription).
  public final class CloudKitStore: KeyValueSyncStore {
    /// ``StoreLimits/cloudKit``: no total or key-count cap, 1,000,000 bytes a record.
    public let limits = StoreLimits.cloudKit
    private let core: CloudKitStoreCore
    private let bridge: CloudKitEngineBridge
    private let observers: Locked<[UUID: @Sendable (ExternalChange) -> Void]>

    /// A store over the private database of the container `containerIdentifier`, keeping
    /// its state in `directory` (the Application Support folder's `Zephyr/CloudKit`
    /// subfolder by default; pass the app group's container for an app and its
    /// extensions).
    public init(containerIdentifier: String, directory: URL? = nil) {
      let folder =
        directory
        ?? (FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        ?? FileManager.default.temporaryDirectory)
        .appendingPathComponent("Zephyr", isDirectory: true).appendingPathComponent("CloudKit", isDirectory: true)
      let file = CloudKitStateFile(
        url: folder.appendingPathComponent(CloudKitRecordName.name(for: containerIdentifier) + ".state"))
      let bridge = CloudKitEngineBridge()
      let observers = Locked<[UUID: @Sendable (ExternalChange) -> Void]>([:])
      let core = CloudKitStoreCore(persistence: file, driver: bridge) { change in
        for handler in observers.withLock({ Array($0.values) }) { handler(change) }
      }
      self.observers = observers
      self.bridge = bridge
      self.core = core
      let database = CKContainer(identifier: containerIdentifier).privateCloudDatabase
      bridge.start(core: core, database: database)
    }

    /// The key's value: its unsent change, else the last server version the device knows.
    public func value(forKey key: String) -> PropertyListValue? { core.value(forKey: key) }

    /// Every key's value.
    public func allValues() -> [String: PropertyListValue] { core.allValues() }

    /// Queues a save of the key's record; the engine sends it. A record over 1 MB is
    /// refused with a `quotaViolation` (the coordinator refuses it by name before).
    public func setValue(_ value: PropertyListValue, forKey key: String) { core.setValue(value, forKey: key) }

    /// Queues a deletion of the key's record.
    public func removeValue(forKey key: String) { core.removeValue(forKey: key) }

    /// Saves the store's state and hands its queue to the engine, which sends it on its
    /// own schedule. `false` when the state could not be saved.
    @discardableResult
    public func synchronize() -> Bool { core.synchronize() }

    /// Calls `handler` for every change the store reports, on the engine's thread, until
    /// the token is cancelled or released.
    public func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
      let id = UUID()
      observers.withLock { $0[id] = handler }
      return ObservationToken { [observers] in observers.withLock { _ = $0.removeValue(forKey: id) } }
    }

    /// Whether nothing is sent because the user deleted the app's iCloud data in Settings.
    public var isPausedAfterPurge: Bool { core.isPausedAfterPurge }

    /// The latest time the server lost the store's zone (deleted, purged by the user,
    /// encrypted data reset), and what the store did; `nil` when it never did.
    public var lastReset: StoreReset? { core.lastReset }

    /// Sends this device's values again after a purge, when the user chose to sync again.
    public func resumeAfterPurge() { core.resumeAfterPurge() }
  }
#endif

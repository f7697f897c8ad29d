import Foundation

/// Keeps chosen `UserDefaults` keys equal on all of a person's devices through a
/// ``KeyValueSyncStore``.
///
/// The ``Zephyr`` facade forwards to one shared coordinator; create your own for extra
/// suites or in tests:
///
/// ```swift
/// let cloud = SimulatedCloud()
/// let coordinator = SyncCoordinator(defaults: suite, suiteName: "group.example",
///                                   store: cloud.device("A"))
/// coordinator.addKeysToBeMonitored(keys: ["theme"])
/// coordinator.sync()
/// ```
///
/// Every method may be called from any thread, and from inside Zephyr's own callbacks (a
/// log handler, a conflict resolver, an observer of `didChangeNotification` or of
/// ``Zephyr/keysDidChangeOnCloudNotification``). Operations run one at a time, and no
/// lock is held while one calls `UserDefaults`, the store or your code; see
/// <doc:GettingStarted#Threading>. Releasing the coordinator stops its observers: it
/// applies no event after it is gone (once the operation running then, if any, ends).
///
/// ## Topics
///
/// ### Creating a coordinator
/// - ``init(defaults:suiteName:store:configuration:)``
///
/// ### Syncing
/// - ``sync()``
/// - ``sync(keys:)-([String])``
/// - ``sync(keys:)-(String...)``
///
/// ### Typed keys
/// - ``subscript(_:)``
/// - ``removeValue(for:)``
/// - ``insert(_:into:)``
/// - ``insert(contentsOf:into:)``
/// - ``remove(_:from:)``
/// - ``remove(contentsOf:from:)``
/// - ``changes(of:)``
///
/// ### Monitoring keys
/// - ``addKeysToBeMonitored(keys:)-([String])``
/// - ``addKeysToBeMonitored(keys:)-(String...)``
/// - ``removeKeysFromBeingMonitored(keys:)-([String])``
/// - ``removeKeysFromBeingMonitored(keys:)-(String...)``
/// - ``monitoredKeys``
/// - ``addKeysToBeMonitored(prefix:)``
/// - ``removeKeysFromBeingMonitored(prefix:)``
/// - ``monitoredPrefixes``
/// - ``waitForPendingLocalEdits()``
///
/// ### Configuration and identity
/// - ``configuration``
/// - ``deviceID``
/// - ``store``
/// - ``domainName``
///
/// ### Launch
/// - ``waitForInitialDownload(timeout:)``
///
/// ### Diagnostics
/// - ``status``
/// - ``metrics``
/// - ``metricsUpdates``
/// - ``resetMetrics()``
public final class SyncCoordinator: Sendable {
  /// The store this coordinator syncs with.
  public let store: any KeyValueSyncStore
  /// The name of the persistent domain that full ``sync()`` covers.
  public var domainName: String { engine.domain.name }
  /// What the coordinator does, behind its public API (see ``SyncEngine``).
  package let engine: SyncEngine

  /// Creates a coordinator and starts observing the store's external changes and the
  /// suite's `didChangeNotification`.
  ///
  /// - Parameters:
  ///   - defaults: The suite to sync; `.standard` by default.
  ///   - suiteName: The suite's name, which names its persistent domain. Pass it for any
  ///     suite other than `.standard`. Without it such a suite is read key by key (its
  ///     domain cannot be listed): ``sync()`` then covers the monitored keys and those the
  ///     store and the ledger know, and ``SyncStatus/notes`` says so.
  ///   - store: The sync store, such as `UbiquitousStore.default` (Apple platforms) or a
  ///     `SimulatedCloud` device.
  ///   - configuration: Behaviour and limits; see ``SyncConfiguration``.
  public init(
    defaults: UserDefaults = .standard, suiteName: String? = nil, store: any KeyValueSyncStore,
    configuration: SyncConfiguration = SyncConfiguration()
  ) {
    self.store = store
    engine = SyncEngine(defaults: defaults, suiteName: suiteName, store: store, configuration: configuration)
    engine.coordinator.withLock { $0.coordinator = self }
  }

  deinit {
    engine.stopObserving()
  }

  // MARK: Configuration and status

  /// The coordinator's configuration. Changing it takes effect with the next operation.
  public var configuration: SyncConfiguration {
    get { engine.configuration }
    set { engine.configuration = newValue }
  }

  /// This device's id, as written into the records it pushes. Read with the ledger: while
  /// protected data has been unavailable since launch, the configured id, or empty.
  public var deviceID: String { engine.state.withLock { $0.deviceID } }

  /// The keys whose inbound changes and local edits are applied automatically.
  public var monitoredKeys: Set<String> { engine.state.withLock { $0.monitoredKeys } }

  /// What the coordinator did and why; see ``SyncStatus``.
  public var status: SyncStatus { engine.status }

  // MARK: Syncing

  /// Reconciles every key of the app's persistent domain, and every key the store and
  /// the ledger know, in both directions; then removes tombstones older than
  /// ``SyncConfiguration/tombstoneLifetime`` from the store.
  ///
  /// Covers the persistent domain only: registered defaults, system keys (`Apple…`,
  /// `NS…`, `com.apple.…`, …) and Zephyr's bookkeeping are never uploaded. When both
  /// sides changed a key to different values, the local value wins (or the
  /// ``SyncConfiguration/conflictResolver`` decides). Returns after pulled values are
  /// written: a read on the next line sees them.
  ///
  /// Called from inside this coordinator's own operation (an observer of its
  /// `UserDefaults` writes on the same thread), it returns at once and runs right after
  /// that operation; called from its conflict resolver, it is not run, and a warning says so.
  public func sync() {
    engine.run(.sync)
  }

  /// Reconciles only `keys`, in both directions, with the rules of ``sync()``. A key
  /// named twice is reconciled once. An empty list reconciles the whole domain, like
  /// ``sync()``, as in Zephyr 5.
  ///
  /// ```swift
  /// coordinator.sync(keys: ["theme", "fontSize"])
  /// ```
  public func sync(keys: [String]) {
    engine.run(keys.isEmpty ? .sync : .syncKeys(keys))
  }

  /// Reconciles only `keys`; see ``sync(keys:)-([String])``.
  public func sync(keys: String...) {
    sync(keys: keys)
  }

  /// Adds keys whose inbound store changes and local edits are applied automatically.
  /// A key Zephyr can never sync (too long, a system or bookkeeping key) is refused and
  /// listed in ``status``.
  public func addKeysToBeMonitored(keys: [String]) {
    engine.addKeysToBeMonitored(keys: keys)
  }

  /// Adds keys to monitor; see ``addKeysToBeMonitored(keys:)-([String])``.
  public func addKeysToBeMonitored(keys: String...) {
    addKeysToBeMonitored(keys: keys)
  }

  /// Stops applying inbound changes and local edits of `keys` automatically. Their
  /// values stay where they are; ``sync()`` still covers them.
  public func removeKeysFromBeingMonitored(keys: [String]) {
    engine.state.withLock { state in
      state.monitoredKeys.subtract(keys)
    }
  }

  /// Stops monitoring keys; see ``removeKeysFromBeingMonitored(keys:)-([String])``.
  public func removeKeysFromBeingMonitored(keys: String...) {
    removeKeysFromBeingMonitored(keys: keys)
  }

  /// Blocks until every local-edit push that a `didChangeNotification` scheduled has
  /// run, and the operation running now (if any) has ended. For tests and benchmarks: an
  /// app never needs to wait. While protected data is unavailable it returns once the work
  /// that can run has run: what waits for the first unlock (see
  /// ``SyncStatus/isProtectedDataAvailable``) does not hold it. Called from inside Zephyr's own work (a log handler on the
  /// local-edit queue, a resolver, an observer of its writes), where waiting could never
  /// end, it returns at once with a warning.
  public func waitForPendingLocalEdits() {
    engine.waitForPendingLocalEdits()
  }

  // MARK: Monitoring by prefix

  /// Monitors every key that starts with `prefix`, now and as keys appear: per-item keys
  /// such as `account.v2.<id>` that other devices add, change and delete are applied as
  /// their store changes arrive, without a full ``sync()``, and local edits of them are
  /// pushed like those of any monitored key.
  ///
  /// ```swift
  /// coordinator.addKeysToBeMonitored(prefix: "account.v2.")
  /// // another device sets "account.v2.42": applied here when its change arrives
  /// ```
  ///
  /// The match is a plain string prefix: `"account.v2."` covers `account.v2.42`, not
  /// `account.v2` or `account.v3.1`. System and Zephyr bookkeeping keys are never covered,
  /// and a key under the prefix that Zephyr cannot sync (over 64 UTF-8 bytes) is refused
  /// by name in ``status`` when it shows up. Keys under a prefix count in the store's key
  /// budget like any other key, as they are pushed or pulled.
  ///
  /// Finding new keys costs a read of the suite's persistent domain: on each local-edit
  /// push while a prefix is monitored, and on an event that names no keys (the initial
  /// download, an account change). An event that names its keys costs nothing more.
  public func addKeysToBeMonitored(prefix: String) {
    engine.addKeysToBeMonitored(prefix: prefix)
  }

  /// Stops monitoring the keys under `prefix` (keys also monitored by name stay
  /// monitored). Their values stay where they are; ``sync()`` still covers them.
  ///
  /// ```swift
  /// coordinator.removeKeysFromBeingMonitored(prefix: "account.v2.")
  /// ```
  public func removeKeysFromBeingMonitored(prefix: String) {
    engine.removeKeysFromBeingMonitored(prefix: prefix)
  }

  /// The prefixes monitored with ``addKeysToBeMonitored(prefix:)``.
  public var monitoredPrefixes: Set<String> { engine.monitoredPrefixes }

  // MARK: Launch

  /// Waits until the store's initial download has happened and its values for the
  /// monitored keys are in `UserDefaults`, or `timeout` has passed; returns where it
  /// stands then (``SyncStatus/initialDownload``).
  ///
  /// Returns at once unless the download is ``InitialDownload/pending`` (a new install, or
  /// protected data unavailable since launch so that Zephyr cannot tell yet): an install
  /// that synced before returns ``InitialDownload/done`` or ``InitialDownload/unknown``
  /// without waiting. The timeout is measured by ``SyncConfiguration/sleep``; cancelling
  /// the calling task ends the wait too. See ``InitialDownload`` for the first-launch
  /// pattern it serves:
  ///
  /// ```swift
  /// if await coordinator.waitForInitialDownload(timeout: .seconds(10)) != .pending,
  ///   defaults.object(forKey: "onboarded") == nil
  /// {
  ///   defaults.set(false, forKey: "onboarded")   // really a first launch
  /// }
  /// ```
  public func waitForInitialDownload(timeout: Duration) async -> InitialDownload {
    await engine.waitForInitialDownload(timeout: timeout)
  }

  // MARK: Metrics

  /// What this process's coordinator did over the last seven days; see ``SyncMetrics``.
  ///
  /// ```swift
  /// let m = coordinator.metrics
  /// if m.launchesSignedOut > 0, coordinator.status.isSignedIn == false { showSignInCard() }
  /// ```
  ///
  /// Reads the configured clock (to drop days that passed since the last operation) and
  /// the coordinator's state; nothing else.
  public var metrics: SyncMetrics {
    engine.metrics
  }

  /// Starts the metrics over: every count is dropped, here and (at the end of the next
  /// operation) in the file beside the ledger. Other processes' metrics are theirs.
  public func resetMetrics() {
    engine.resetMetrics()
  }

  /// The metrics now, then again after each batch that changed them. Coalesced: a
  /// consumer slower than the batches gets the latest metrics, not every one
  /// (`bufferingNewest(1)`), and batches that changed nothing yield nothing. Finishes
  /// when the coordinator is released.
  ///
  /// ```swift
  /// for await m in coordinator.metricsUpdates {
  ///   statusModel.metrics = m
  /// }
  /// ```
  ///
  /// Metrics are yielded with no lock held, by whichever thread finished the batch.
  public var metricsUpdates: AsyncStream<SyncMetrics> {
    engine.metricsUpdates
  }
}

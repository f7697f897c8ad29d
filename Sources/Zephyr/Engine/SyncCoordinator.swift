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
/// applies no event after it is gone.
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
/// - ``changes(of:)``
///
/// ### Monitoring keys
/// - ``addKeysToBeMonitored(keys:)-([String])``
/// - ``addKeysToBeMonitored(keys:)-(String...)``
/// - ``removeKeysFromBeingMonitored(keys:)-([String])``
/// - ``removeKeysFromBeingMonitored(keys:)-(String...)``
/// - ``monitoredKeys``
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
  public var domainName: String { domain.name }

  let domain: UserDefaultsDomain
  let ledgerFile: LedgerFile
  /// Where ``metrics`` are kept, beside the ledger.
  let metricsFile: MetricsFile
  /// The check made before each operation where the suite does not report protected data.
  let protectedDataProbe: ProtectedDataProbe
  /// Callers of ``waitForInitialDownload(timeout:)`` waiting now.
  let downloadWaiters = Locked(DownloadWaiters())
  /// The coordinator's state. Held only to read or change it, never across a call out.
  let state: Locked<EngineState>
  /// Crash points and pauses for tests; empty in apps.
  package let testHooks = Locked(TestHooks())
  private let observations = Locked<[ObservationToken]>([])
  /// The ``changes(of:)`` streams, finished when the coordinator is released.
  let changeObservers = Locked(ChangeObservers())
  /// The ``metricsUpdates`` streams, finished when the coordinator is released.
  let metricsObservers = Locked(MetricsObservers())
  /// Held while the metrics file is written (and only then), so saves never interleave.
  let metricsSaving = Locked(())
  /// The last large blob each typed key read, decoded (see ``DecodedRead``).
  let decodedReads = Locked<[String: DecodedRead]>([:])
  /// Signalled when a write of a key that element edits wait for returns (see
  /// ``KeyWrites``).
  let keyWritesSettled = NSCondition()
  let localEditQueue = DispatchQueue(label: "Zephyr.local-edits")

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
    let configuration = configuration.adoptingLimits(of: store)
    let domain = UserDefaultsDomain(defaults: defaults, suiteName: suiteName)
    self.domain = domain
    self.store = store
    let ledgerFile = LedgerFile(
      directory: configuration.ledgerDirectory, domainName: domain.name, process: configuration.processIdentity)
    self.ledgerFile = ledgerFile
    metricsFile = MetricsFile(ledger: ledgerFile)
    let probe = ProtectedDataProbe(ledgerFile: ledgerFile)
    protectedDataProbe = probe
    // Before the first unlock the suite reads as empty and the ledger cannot be read:
    // nothing is read until protected data is available (see admitsProtectedData(_:)).
    if domain.reportedProtectedDataAvailability() ?? probe.isAvailable() {
      state = Locked(EngineState.load(domain: domain, ledgerFile: ledgerFile, configuration: configuration))
    } else {
      state = Locked(EngineState.waitingForProtectedData(configuration: configuration))
    }
    if domain.persistentName == nil {
      state.withLock {
        $0.note(
          "suite given without its name: sync() covers only the monitored keys and those the store and the "
            + "ledger know; pass suiteName to sync its whole persistent domain")
      }
    }
    startObserving()
    // Counted before the first operation, which saves it.
    countLaunch()
    run(.settlePendingPulls)
    // Apple: call synchronize() "upon app launch, or upon returning to the foreground".
    synchronizeUnlessProtected()
    emitLogs()
  }

  deinit {
    for token in observations.withLock({ $0 }) { token.cancel() }
    // Waiters of the initial download learn where it stands; their timers end on their own.
    let status = state.withLock { $0.status.initialDownload }
    for (waiter, timer) in downloadWaiters.withLock({ $0.removeAll() }) {
      timer?.cancel()
      waiter.resume(returning: status)
    }
    // Finished outside the lock: a stream's termination handler is its consumer's code.
    for observer in changeObservers.withLock({ $0.removeAll() }) { observer.finish() }
    for continuation in metricsObservers.withLock({ $0.removeAll() }) { continuation.finish() }
  }

  // MARK: Configuration and status

  /// The configured clock's time, read with no lock held (the clock is app code).
  func now() -> Date {
    let clock = state.withLock { $0.configuration.clock }
    return callingOut {
      LockAudit.assertNoLockHeld(calling: "the configured clock")
      return clock()
    }
  }

  /// The coordinator's configuration. Changing it takes effect with the next operation.
  public var configuration: SyncConfiguration {
    get { state.withLock { $0.configuration } }
    set {
      let adopted = newValue.adoptingLimits(of: store)
      state.withLock { $0.configuration = adopted }
    }
  }

  /// This device's id, as written into the records it pushes. Read with the ledger: while
  /// protected data has been unavailable since launch, the configured id, or empty.
  public var deviceID: String { state.withLock { $0.deviceID } }

  /// The keys whose inbound changes and local edits are applied automatically.
  public var monitoredKeys: Set<String> { state.withLock { $0.monitoredKeys } }

  /// What the coordinator did and why; see ``SyncStatus``.
  public var status: SyncStatus {
    let isSignedIn = store.isSignedIn
    let lastReset = store.lastReset
    let available = checkProtectedData()
    // Key sizes open records (inflate, decode merge states): with no lock held, once per
    // stored value.
    let unsized = state.withLock { $0.budget.unsized() }
    let sized = unsized.map { (SyncStatus.KeySize(key: $0.key, storeValue: $0.value), $0.revision) }
    var snapshot = state.withLock { state in
      for (size, revision) in sized { state.budget.cache(size, revision: revision) }
      return state.statusSnapshot(isSignedIn: isSignedIn)
    }
    snapshot.isProtectedDataAvailable = available
    snapshot.lastStoreReset = lastReset
    return snapshot
  }

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
    run(.sync)
  }

  /// Reconciles only `keys`, in both directions, with the rules of ``sync()``. A key
  /// named twice is reconciled once. An empty list reconciles the whole domain, like
  /// ``sync()``, as in Zephyr 5.
  ///
  /// ```swift
  /// coordinator.sync(keys: ["theme", "fontSize"])
  /// ```
  public func sync(keys: [String]) {
    run(keys.isEmpty ? .sync : .syncKeys(keys))
  }

  /// Reconciles only `keys`; see ``sync(keys:)-([String])``.
  public func sync(keys: String...) {
    sync(keys: keys)
  }

  /// Adds keys whose inbound store changes and local edits are applied automatically.
  /// A key Zephyr can never sync (too long, a system or bookkeeping key) is refused and
  /// listed in ``status``.
  public func addKeysToBeMonitored(keys: [String]) {
    state.withLock { state in
      state.monitoredKeys.formUnion(state.admit(keys))
    }
    emitLogs()
  }

  /// Adds keys to monitor; see ``addKeysToBeMonitored(keys:)-([String])``.
  public func addKeysToBeMonitored(keys: String...) {
    addKeysToBeMonitored(keys: keys)
  }

  /// Stops applying inbound changes and local edits of `keys` automatically. Their
  /// values stay where they are; ``sync()`` still covers them.
  public func removeKeysFromBeingMonitored(keys: [String]) {
    state.withLock { state in
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
    let thread = ThreadIdentity.current
    if state.withLock({ $0.lane.isOwned(by: thread) }) || DispatchQueue.getSpecific(key: Self.localEditQueueKey) == id {
      warnNow("waitForPendingLocalEdits() called from inside Zephyr's own work: not waiting")
      return
    }
    pushCoalescedWrites()
    localEditQueue.sync {}
    // Not while the running operation calls out: it may be waiting for this very thread.
    state.withLock(when: { $0.lane.admitsCaller }, { _ in })
  }

  // MARK: Observers

  private func startObserving() {
    localEditQueue.setSpecific(key: Self.localEditQueueKey, value: id)
    let storeToken = store.observeExternalChanges { [weak self] change in
      self?.receive(change)
    }
    // Only this coordinator's own instance: another coordinator's writes, or another
    // instance of the same suite, never reach this observer (see ``sync()`` for those).
    let defaultsToken = ObservationToken.observing(
      UserDefaults.didChangeNotification, from: domain.instance, on: .default
    ) { [weak self] _ in
      self?.userDefaultsDidChange()
    }
    var tokens = [storeToken, defaultsToken]
    // iOS's protected-data notifications (by raw name), and those of this coordinator's
    // suite when it reports protected data itself: look again, and run what waited. Another
    // reporting suite's post says nothing of this one, and running this coordinator's
    // backlog on its thread would race the caller that waits for its own unlock.
    let suite = ObjectIdentifier(domain.instance)
    for name in [ProtectedDataNotification.didBecomeAvailable, ProtectedDataNotification.willBecomeUnavailable] {
      tokens.append(
        .observing(name, from: nil, on: .default) { [weak self] notification in
          if let poster = notification.object as? any ProtectedDataReporting, ObjectIdentifier(poster) != suite {
            return
          }
          self?.protectedDataMayHaveChanged()
          self?.emitLogs()
        })
    }
    for background in Self.backgroundNotifications {
      tokens.append(.observing(background, from: nil, on: .default) { [weak self] _ in self?.enteredBackground() })
    }
    if let foreground = Self.foregroundNotification {
      tokens.append(
        .observing(foreground, from: nil, on: .default) { [weak self] _ in
          self?.synchronizeUnlessProtected()
          self?.emitLogs()
        })
    }
    observations.withLock { $0 = tokens }
  }

  /// The notification posted when the app returns to the foreground, where there is one:
  /// Zephyr then calls the store's `synchronize()`, as Apple recommends. Named by its raw
  /// value so that the library needs neither UIKit, AppKit nor WatchKit (whose constants
  /// are main-actor isolated); on watchOS, WatchKit's `WKApplicationWillEnterForeground`
  /// notification, which Zephyr 5 observed too.
  static var foregroundNotification: Notification.Name? {
    #if os(watchOS)
      Notification.Name("WKApplicationWillEnterForegroundNotification")
    #elseif canImport(UIKit)
      Notification.Name("UIApplicationWillEnterForegroundNotification")
    #elseif canImport(AppKit)
      Notification.Name("NSApplicationDidBecomeActiveNotification")
    #else
      nil
    #endif
  }

  /// An external change from the store: applied at once (see ``run(_:)`` for when it
  /// is queued for the running operation instead).
  func receive(_ change: ExternalChange) {
    run(.event(change))
  }

  var id: ObjectIdentifier { ObjectIdentifier(self) }

  static let localEditQueueKey = DispatchSpecificKey<ObjectIdentifier>()
}

/// Test hooks: crash points and pauses. Empty, and never consulted but for a nil check,
/// in apps.
package struct TestHooks: Sendable {
  /// Asked before every write; answering `true` simulates a crash at that point: this
  /// write and every later one of this coordinator are skipped, as if the process died.
  package var crashBefore: (@Sendable (WritePoint) -> Bool)?
  /// Called for every pulled key between the decision and the check that the local value
  /// is still the one decided on.
  package var beforePullWrite: (@Sendable (String) -> Void)?
  /// Called by an element edit (`insert`, `remove`) between its read of the key and its
  /// write.
  package var betweenElementReadAndWrite: (@Sendable (String) -> Void)?
  package var crashed = false

  package init() {}
}

/// One write an operation makes, where a simulated crash may strike.
package enum WritePoint: Sendable, Equatable {
  case store(String)
  case defaults(String)
  case ledger
}

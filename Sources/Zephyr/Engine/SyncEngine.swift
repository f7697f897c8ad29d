import Foundation

/// What a ``SyncCoordinator`` does: the engine behind its public API.
///
/// It owns the engine's state (``EngineState``, behind one lock), the operation lane that
/// runs one operation at a time (``OperationLane``), the local-edit queue and its
/// coalesced batches, the observers of the store, the suite and the app's lifecycle, and
/// the typed keys' caches and streams. Its parts live in extensions by area:
///
/// - operations and their order: `SyncEngine+Running`, `+Requests`, `+Batch`,
///   `+Scheduling`, `+Writes`, `+CallOut`;
/// - typed access and element edits: `SyncEngine+Typed`, `+Elements`, `+Changes`;
/// - the launch: `SyncEngine+ProtectedData`, `+InitialDownload`;
/// - diagnostics: `SyncEngine+Metrics`; prefixes: `SyncEngine+Prefixes`.
///
/// No lock is held while it calls `UserDefaults`, the store, `NotificationCenter` or app
/// code (see ``callingOut(_:)``). Released with its coordinator: it then stops its
/// observers and finishes its streams.
package final class SyncEngine: Sendable {
  /// The store this engine syncs with.
  let store: any KeyValueSyncStore
  let domain: UserDefaultsDomain
  let ledgerFile: LedgerFile
  /// Where ``metrics`` are kept, beside the ledger.
  let metricsFile: MetricsFile
  /// The check made before each operation where the suite does not report protected data.
  let protectedDataProbe: ProtectedDataProbe
  /// Callers of ``waitForInitialDownload(timeout:)`` waiting now.
  let downloadWaiters = Locked(DownloadWaiters())
  /// The engine's state. Held only to read or change it, never across a call out.
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
  /// The coordinator this engine works for, the object of its notifications.
  let coordinator = Locked(Owner())

  /// A weak reference to the coordinator, which owns the engine.
  struct Owner: Sendable {
    weak var coordinator: SyncCoordinator?
  }

  /// Loads the engine's state (unless protected data is unavailable) and starts
  /// observing; see ``SyncCoordinator/init(defaults:suiteName:store:configuration:)``.
  init(defaults: UserDefaults, suiteName: String?, store: any KeyValueSyncStore, configuration: SyncConfiguration) {
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

  /// The configured clock's time, read with no lock held (the clock is app code).
  func now() -> Date {
    let clock = state.withLock { $0.configuration.clock }
    return callingOut {
      LockAudit.assertNoLockHeld(calling: "the configured clock")
      return clock()
    }
  }

  // MARK: Public API

  /// Monitors `keys`, less those refused (see ``SyncCoordinator/addKeysToBeMonitored(keys:)-([String])``).
  func addKeysToBeMonitored(keys: [String]) {
    state.withLock { state in
      state.monitoredKeys.formUnion(state.admit(keys))
    }
    emitLogs()
  }

  /// The engine's configuration (see ``SyncCoordinator/configuration``).
  var configuration: SyncConfiguration {
    get { state.withLock { $0.configuration } }
    set {
      let adopted = newValue.adoptingLimits(of: store)
      state.withLock { $0.configuration = adopted }
    }
  }

  /// The status now (see ``SyncCoordinator/status``).
  var status: SyncStatus {
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

  /// See ``SyncCoordinator/waitForPendingLocalEdits()``.
  func waitForPendingLocalEdits() {
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

  /// Stops observing the store, the suite and the app's lifecycle: the coordinator was
  /// released. An operation running now ends; nothing new starts from an event.
  func stopObserving() {
    let tokens = observations.withLock { tokens in
      defer { tokens = [] }
      return tokens
    }
    for token in tokens { token.cancel() }
  }

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

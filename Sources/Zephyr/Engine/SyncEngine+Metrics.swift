import Foundation

/// The ``metricsUpdates`` streams of one coordinator. Held in a `Locked`; one thread at a
/// time delivers (the drainer, as for ``ChangeObservers``), so the streams yield in order
/// and end on the latest metrics.
struct MetricsObservers: Sendable {
  private struct Observer: Sendable {
    let continuation: AsyncStream<SyncMetrics>.Continuation
    /// The ``MetricsWindow/version`` last yielded to it.
    var delivered: Int?
  }

  private var observers: [Int: Observer] = [:]
  private var nextID = 0
  private var isDraining = false
  private var pending = false

  mutating func add(_ continuation: AsyncStream<SyncMetrics>.Continuation) -> Int {
    nextID += 1
    observers[nextID] = Observer(continuation: continuation)
    return nextID
  }

  mutating func remove(_ id: Int) {
    observers[id] = nil
  }

  /// Removes every stream and returns them, to be finished outside the lock.
  mutating func removeAll() -> [AsyncStream<SyncMetrics>.Continuation] {
    defer { observers = [:] }
    return observers.keys.sorted().compactMap { observers[$0]?.continuation }
  }

  /// Marks the metrics changed; `true` when the caller is to drain (no drain runs: it
  /// now counts as running).
  mutating func markChanged() -> Bool {
    guard !observers.isEmpty else { return false }
    pending = true
    guard !isDraining else { return false }
    isDraining = true
    return true
  }

  /// Whether the drainer is to read the metrics again; ends the drain when not.
  mutating func takePending() -> Bool {
    guard pending else {
      isDraining = false
      return false
    }
    pending = false
    return true
  }

  /// The streams to yield metrics of `version` to: those that have not yielded it.
  /// Records them as yielded.
  mutating func deliveries(of version: Int) -> [AsyncStream<SyncMetrics>.Continuation] {
    var due: [AsyncStream<SyncMetrics>.Continuation] = []
    for id in observers.keys.sorted() where observers[id]?.delivered != version {
      observers[id]?.delivered = version
      if let continuation = observers[id]?.continuation { due.append(continuation) }
    }
    return due
  }
}

extension SyncEngine {
  /// See ``SyncCoordinator/metrics``.
  var metrics: SyncMetrics {
    let today = MetricsWindow.day(of: now())
    return state.withLock { $0.metrics.summary(today: today, measuring: $0.configuration.measuresDeliveryDelay) }
  }

  /// See ``SyncCoordinator/resetMetrics()``.
  func resetMetrics() {
    state.withLock { $0.metrics.reset() }
    saveMetrics(now: nil)
    publishMetrics()
  }

  /// See ``SyncCoordinator/metricsUpdates``.
  var metricsUpdates: AsyncStream<SyncMetrics> {
    let (stream, continuation) = AsyncStream<SyncMetrics>.makeStream(bufferingPolicy: .bufferingNewest(1))
    let id = metricsObservers.withLock { $0.add(continuation) }
    continuation.onTermination = { [weak self] _ in
      self?.metricsObservers.withLock { $0.remove(id) }
    }
    // The current metrics first, through the same drain as every update (so a batch
    // finished meanwhile is yielded after them, never before).
    publishMetrics()
    return stream
  }

  /// Counts this launch: whether the store reported no iCloud account now. Once, at
  /// creation (the only `isSignedIn` read metrics make).
  func countLaunch() {
    let signedOut = store.isSignedIn == false
    let today = MetricsWindow.day(of: now())
    state.withLock { state in
      state.metrics.roll(to: today)
      state.metrics.countLaunch(signedOut: signedOut)
    }
  }

  /// Turns counting off (or on again), for zephyr-bench's side-by-side measurement of
  /// what metrics cost. Apps always count.
  package func setCountsMetrics(_ on: Bool) {
    state.withLock { $0.metrics.isCounting = on }
  }

  /// Moves the metrics to the clock's day; called as each operation starts. Returns
  /// `now`.
  func rollMetrics(now: Date) -> Date {
    let today = MetricsWindow.day(of: now)
    state.withLock { $0.metrics.roll(to: today) }
    return now
  }

  /// Saves the metrics beside the ledger, at the end of an operation (`now`: its time),
  /// when they changed and a save is due (``MetricsWindow/needsSave(at:)``): once a
  /// launch, a new day, a reset or a full sync's drift is counted, else at most once a
  /// minute. A save replaces a file (milliseconds), so a stream of edits does not make one
  /// each. `now` `nil`: whenever they changed (the app moves to the background, or
  /// ``resetMetrics()``); never from `deinit`, which may run under any caller's lock. A
  /// failure is not reported (telemetry is never worth a warning); the next
  /// save tries again. Saves are made one at a time (``metricsSaving``), so an older
  /// window never replaces a newer one.
  func saveMetrics(now: Date?) {
    // A simulated crash stops these saves too; they are no write point of their own.
    // Outside an operation (which checked already), nothing is written while protected
    // data is unavailable: the ledger folder is out of reach before the first unlock.
    guard !testHooks.withLock({ $0.crashed }), now != nil || checkProtectedData() else { return }
    metricsSaving.withLock { _ in
      guard
        let window = state.withLock({
          $0.metrics.needsSave(at: now) && $0.protectedData.isLoaded ? $0.metrics : nil
        }),
        (try? metricsFile.save(window)) != nil
      else { return }
      state.withLock { state in
        state.metrics.savedAt = now ?? state.metrics.savedAt
        state.metrics.saveDue = false
        if state.metrics.version == window.version { state.metrics.isDirty = false }
      }
    }
  }

  /// The app moved to the background, where it may be ended without notice: the metrics
  /// waiting for their once-a-minute save are saved now.
  func enteredBackground() {
    saveMetrics(now: nil)
  }

  /// The notifications an app or extension posts as it moves to the background, where
  /// it may be ended without notice: the metrics waiting for their once-a-minute save are
  /// saved then. Named by raw value, like ``foregroundNotification``.
  static var backgroundNotifications: [Notification.Name] {
    #if os(watchOS)
      [Notification.Name("WKApplicationDidEnterBackgroundNotification")]
    #elseif canImport(UIKit)
      [
        Notification.Name("UIApplicationDidEnterBackgroundNotification"),
        Notification.Name("NSExtensionHostDidEnterBackgroundNotification"),
      ]
    #elseif canImport(AppKit)
      [Notification.Name("NSApplicationWillTerminateNotification")]
    #else
      []
    #endif
  }

  /// Yields the metrics to the ``metricsUpdates`` streams, unless they yielded this
  /// version already. Called with no lock held.
  func publishMetrics() {
    guard metricsObservers.withLock({ $0.markChanged() }) else { return }
    while metricsObservers.withLock({ $0.takePending() }) {
      let today = MetricsWindow.day(of: now())
      let (version, metrics) = state.withLock {
        ($0.metrics.version, $0.metrics.summary(today: today, measuring: $0.configuration.measuresDeliveryDelay))
      }
      for continuation in metricsObservers.withLock({ $0.deliveries(of: version) }) {
        continuation.yield(metrics)
      }
    }
  }
}

extension SyncEngine {
  /// Counts, for each of `keys` whose record the batch takes (a pull, or a merge that
  /// writes the local value) and that carries its writer's time, the time since then.
  func countDeliveryDelays(
    _ keys: [String], _ decisions: [String: Reconciler.Decision], remote: [String: PropertyListValue], now: Date
  ) {
    let delays = keys.compactMap { key -> TimeInterval? in
      switch decisions[key]?.action {
      case .pull?: break
      case .merge(let merge)? where merge.local != nil: break
      default: return nil
      }
      return SentTime.read(remote[key]).map { now.timeIntervalSince($0) }
    }
    guard !delays.isEmpty else { return }
    state.withLock { $0.metrics.countDelays(delays) }
  }
}

extension EngineState {
  /// `record` as it is sent: with the writer's time (the plan's) when this device
  /// measures delivery delay (see ``SentTime``).
  func sentForm(of record: PropertyListValue, _ plan: BatchPlan) -> PropertyListValue {
    configuration.measuresDeliveryDelay ? SentTime.appending(plan.now, to: record) : record
  }
}

extension SyncAction {
  /// Whether the decision found the local value and the store's apart: it writes one of
  /// them (a push, a republish, a pull, a merge that writes either side). Adopting the
  /// same value, doing nothing and skipping a key do not count.
  var differsFromStore: Bool {
    switch self {
    case .push, .republish, .pull: true
    case .merge(let merge): merge.push != nil || merge.local != nil
    case .none, .adopt, .skip: false
    }
  }
}

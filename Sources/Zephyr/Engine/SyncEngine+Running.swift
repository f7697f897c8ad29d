import Foundation

/// What an operation leaves to do once it ends.
struct OperationEffects {
  /// Keys whose local value the operation changed.
  var changedKeys: Set<String> = []
  /// Whether it wrote to the store (it then calls `synchronize()` once).
  var storeWritten = false
  /// Keys that ``SyncCoordinator/changes(of:)`` streams follow, read when the operation starts.
  var observed: Set<String> = []
  /// The observed keys the operation reconciled: their streams read them again when it
  /// ends (a value equal to the one last yielded is not yielded again).
  var reconciledObserved: Set<String> = []
  /// Keys whose decision found the local value and the store's apart (see
  /// ``SyncMetrics/keysDifferingFromStore``).
  var differingFromStore = 0
  /// Whether the operation measures how long the records it takes took to arrive: a
  /// server-change event, with ``SyncConfiguration/measuresDeliveryDelay`` on.
  var measuresDelivery = false
}

extension SyncEngine {
  /// Runs `request` on the calling thread, one operation at a time, holding no lock while
  /// it calls out; then emits the log lines and posts the change notification.
  ///
  /// - From inside a conflict resolver of this coordinator: not run; a warning says so.
  /// - From inside this coordinator's operation on the same thread (an observer of its
  ///   `UserDefaults` writes, a store event posted during its store write): queued, and
  ///   run by that operation before it ends.
  /// - While another thread's operation runs: waits for it, except while that operation
  ///   calls out to a `UserDefaults` write or the resolver (it may be waiting for this very
  ///   thread, see ``OperationLane``): then queued for it, and run before it ends.
  func run(_ request: Request) {
    let thread = ThreadIdentity.current
    enum Entry { case resolver, nested, other }
    let entry = state.withLock { state -> Entry in
      guard state.lane.isOwned(by: thread) else { return .other }
      if state.lane.isInResolver { return .resolver }
      state.lane.queue(request)
      state.debug("\(request.callName) called from inside an operation: runs right after it")
      return .nested
    }
    switch entry {
    case .resolver:
      warnNow("\(request.callName) called from this coordinator's conflict resolver: not run")
      return
    case .nested:
      return
    case .other:
      break
    }
    let (owns, releases) = state.withLock(
      when: { $0.lane.admitsCaller || $0.lane.isOwned(by: thread) },
      { ($0.takeLaneOrQueue(request, thread: thread), $0.lane.releases) })
    guard owns else {
      emitLogs()
      waitForQueued(request, releasesBefore: releases)
      return
    }
    var changed = Set<String>()
    var reconciledObserved = Set<String>()
    var next: Request? = request
    while let current = next {
      let effects = execute(current)
      changed.formUnion(effects.changedKeys)
      reconciledObserved.formUnion(effects.reconciledObserved)
      next = state.withLock { state -> Request? in
        guard !state.lane.queued.isEmpty else {
          state.lane.release()
          return nil
        }
        return state.lane.queued.removeFirst()
      }
    }
    emitLogs()
    postChange(of: changed)
    if !reconciledObserved.isEmpty { publishChanges(of: reconciledObserved) }
    publishMetrics()
  }

  /// A `sync()` or `sync(keys:)` queued for another thread's operation (it was calling
  /// out, and may be waiting for this very thread) waits until that operation has let go,
  /// having run it, so that a read on the next line sees what it pulled: two seconds at
  /// most, then it returns with a warning. Store events and pushes never wait: the store's
  /// thread may be the one the operation waits for.
  private func waitForQueued(_ request: Request, releasesBefore releases: UInt64) {
    switch request {
    case .sync, .syncKeys: break
    case .event, .localEdits, .settlePendingPulls, .protectedDataAvailable: return
    }
    let ran = state.withLock(
      when: { $0.lane.releases > releases }, until: Date(timeIntervalSinceNow: 2), { _ in }
    ).ready
    if !ran {
      warnNow("\(request.callName) queued behind an operation that did not end for two seconds: returned before it ran")
    }
  }

  /// Runs one request as one operation; returns what it left to do.
  private func execute(_ request: Request) -> OperationEffects {
    var effects = OperationEffects(observed: changeObservers.withLock { $0.observedKeys })
    guard admitsProtectedData(request) else { return effects }
    state.withLock { $0.lane.ownWrites = OwnWrites() }
    let started = rollMetrics(now: now())
    primeBudget()
    switch request {
    case .sync: syncEverything(&effects)
    case .syncKeys(let keys): sync(keys, &effects)
    case .event(let change): handle(change, &effects)
    case .localEdits: pushLocalEdits(&effects)
    case .settlePendingPulls: settlePendingPulls()
    case .protectedDataAvailable: break
    }
    synchronizeAfterBatch(wrote: effects.storeWritten)
    state.withLock { state in
      state.checkBudgetThreshold()
      if state.lane.ownWrites.includeOtherEdits {
        // An observer wrote to the suite from inside one of our writes: push that edit too.
        state.lane.localEditsPending = true
        state.lane.queue(.localEdits)
      }
    }
    // Second save of a batch that wrote (the first is made ahead of its writes, in
    // `apply(_:_:)`): the settled entries, and whatever else the operation changed.
    saveLedger()
    saveMetrics(now: started)
    return effects
  }

  /// Sizes every store key once, before the first operation checks a write against the
  /// limits.
  private func primeBudget() {
    guard !state.withLock({ $0.budget.isPrimed }) else { return }
    let values = callingOut { store.allValues() }
    state.withLock { $0.budget.refresh(with: values) }
  }

  // MARK: Effects

  /// Hands the recorded log lines to the log handler (or the default sink), with no lock
  /// held: the handler may call back into the coordinator. Lines its calls record are
  /// emitted too, a few rounds deep; later ones wait for the next operation.
  func emitLogs() {
    // A handler's own calls record lines too: the outer loop emits them, not a nested one.
    let thread = ThreadIdentity.current
    guard state.withLock({ $0.lane.emittingThreads.insert(thread).inserted }) else { return }
    emitRecordedLogs()
    state.withLock { _ = $0.lane.emittingThreads.remove(thread) }
  }

  private func emitRecordedLogs() {
    for _ in 0..<4 {
      let (logs, handler) = state.withLock { $0.takeLogs() }
      guard !logs.isEmpty else { return }
      LockAudit.assertNoLockHeld(calling: "the log handler")
      for message in logs {
        if let handler { handler(message) } else { DefaultLogSink.write(message) }
      }
    }
  }

  /// Logs a warning at once, outside any operation.
  func warnNow(_ text: String) {
    state.withLock { $0.warn(text) }
    emitLogs()
  }

  /// Posts ``Zephyr/keysDidChangeOnCloudNotification`` on the main queue, once, for the
  /// keys whose local value changed.
  private func postChange(of keys: Set<String>) {
    guard !keys.isEmpty else { return }
    let sorted = keys.sorted()
    // Weak: a coordinator released before the main queue runs posts nothing more.
    DispatchQueue.main.async { [weak self] in
      guard let coordinator = self?.coordinator.withLock({ $0.coordinator }) else { return }
      NotificationCenter.default.post(
        name: Zephyr.keysDidChangeOnCloudNotification, object: coordinator,
        userInfo: [Zephyr.changedKeysUserInfoKey: sorted])
    }
  }

  /// After a batch (`wrote`: it wrote to the store), or when the deferred call's timer
  /// fires: calls the store's `synchronize()` when ``SynchronizeSchedule`` says a call is
  /// due, or arms the timer that makes it at the end of the interval.
  func synchronizeAfterBatch(wrote: Bool, timerFired: Bool = false) {
    let now = self.now()
    let decision = state.withLock { state -> SynchronizeSchedule.Decision in
      guard state.configuration.synchronizeOnChange else { return .none }
      return state.synchronizing.decide(
        wrote: wrote, timerFired: timerFired, now: now, interval: state.configuration.synchronizeInterval)
    }
    switch decision {
    case .none:
      return
    case .callNow:
      // A deferred call whose timer fires while protected data is unavailable is made
      // with the launch's, once it is.
      guard mayWrite(nil), !timerFired || checkProtectedData() else {
        if timerFired { state.withLock { $0.protectedData.launchSynchronizeDeferred = true } }
        return
      }
      synchronizeStore(coveringBatches: false)
    case .arm(let delay):
      state.withLock { $0.debug("synchronize() deferred \(String(format: "%.1f", delay)) s: one call per interval") }
      // Weak: a released coordinator makes no call.
      DispatchQueue.global().asyncAfter(deadline: .now() + max(delay, 0)) { [weak self] in
        self?.synchronizeAfterBatch(wrote: false, timerFired: true)
        self?.emitLogs()
      }
      return
    }
  }

  /// Calls the store's `synchronize()` and records what it returned; the first `false`
  /// of a run of them is logged as a warning. `coveringBatches`: a launch or foreground
  /// call, which also covers the batches whose call ``SynchronizeSchedule`` deferred.
  func synchronizeStore(coveringBatches: Bool = true) {
    if coveringBatches { state.withLock { $0.synchronizing.covered() } }
    let succeeded = callingOut { store.synchronize() }
    state.withLock { state in
      if !succeeded, state.status.lastSynchronizeSucceeded != false {
        state.warn(
          "the store's synchronize() returned false: no iCloud account, or the app lacks the key-value storage entitlement; nothing syncs"
        )
      }
      state.status.lastSynchronizeSucceeded = succeeded
    }
  }
}

extension Request {
  /// The public call a request stands for, for log lines.
  var callName: String {
    switch self {
    case .sync: "sync()"
    case .syncKeys: "sync(keys:)"
    case .event(let change): "a \(change.reason) event"
    case .localEdits: "a local edit"
    case .settlePendingPulls: "settling interrupted pulls"
    case .protectedDataAvailable: "resuming once protected data is available"
    }
  }
}

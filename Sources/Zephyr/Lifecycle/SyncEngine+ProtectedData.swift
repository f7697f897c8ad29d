import Foundation

/// Before the first unlock after a restart, `UserDefaults` reads as empty and the ledger
/// cannot be read. Taken at face value, that looks like a reset domain (a new epoch, the
/// store's values win) and an unreadable ledger (discarded): so while protected data is
/// unavailable, a coordinator reads and writes nothing (not `UserDefaults`, not its ledger,
/// not the store) and holds what is asked of it; once the data is available it reads what
/// it put off and runs what waited, in order, before anything else.
extension SyncEngine {
  /// The cheap check made before each operation: the suite's own report when it makes
  /// one (``ProtectedDataReporting``), else the platform's (``ProtectedDataProbe``).
  /// Called with no lock held.
  func checkProtectedData() -> Bool {
    callingOut {
      if let reported = domain.reportedProtectedDataAvailability() { return reported }
      return protectedDataProbe.isAvailable()
    }
  }

  /// Whether `request` runs now, on the thread that runs operations. While protected
  /// data is unavailable it waits, and `false`. Once it is available and something waits,
  /// what waited is queued ahead of `request` (which is queued after it), and `false`.
  func admitsProtectedData(_ request: Request) -> Bool {
    guard checkProtectedData() else {
      state.withLock { state in
        if state.status.isProtectedDataAvailable {
          state.warn(
            "protected data unavailable (before the first unlock): UserDefaults reads as empty; "
              + "nothing is read or written until it is available")
        }
        state.status.isProtectedDataAvailable = false
        state.protectedData.wait(request)
        state.debug("\(request.callName) waits for protected data")
      }
      return false
    }
    let hasWork = state.withLock { state in
      state.status.isProtectedDataAvailable = true
      return state.protectedData.hasWork
    }
    guard hasWork else { return true }
    resumeAfterProtectedData(before: request)
    return false
  }

  /// Reads what the launch put off, writes the held typed sets, makes the launch's
  /// `synchronize()`, and queues the waiting operations, then `request`.
  private func resumeAfterProtectedData(before request: Request) {
    if !state.withLock({ $0.protectedData.isLoaded }) {
      let configuration = state.withLock { $0.configuration }
      let loaded = callingOut { EngineState.load(domain: domain, ledgerFile: ledgerFile, configuration: configuration) }
      state.withLock { $0.adoptLoaded(loaded) }
    }
    let (requests, sets, synchronize) = state.withLock { state in
      let (requests, sets) = state.protectedData.takeAll()
      let synchronize = state.protectedData.launchSynchronizeDeferred
      state.protectedData.launchSynchronizeDeferred = false
      state.debug(
        "protected data available: \(requests.count) waiting operation(s) and \(sets.count) typed set(s) run now")
      return (requests, sets, synchronize)
    }
    if synchronize, mayWrite(nil) { synchronizeStore() }
    // Each written as a typed write is (see ``KeyWrites``): an element edit racing it
    // sees it, and reads again.
    for held in sets {
      let key = held.key
      // The fields the set's type does not know are read now, as a set made now would.
      let value = callingOut {
        held.keeper.map { keep in keep(held.value) { domain.visibleValue(forKey: key) } } ?? held.value
      }
      state.withLock { $0.lane.keyWrites[key, default: KeyWrites()].recordTypedWrite(value) }
      let made = writeLocally(key, value)
      state.withLock { state in
        state.lane.keyWrites[key, default: KeyWrites()].typedWriteReturned()
        guard made else { return }
        state.lane.typedWrites[key] = .written(value)
        state.refusals.clearTypedRefusal(of: key)
      }
      signalKeyWrites()
    }
    // Streams learn the held sets, and the values they could not read meanwhile.
    if !sets.isEmpty { publishChanges(of: sets.map(\.key)) }
    drainChangesIfIdle()
    state.withLock { state in
      var front = requests
      if !sets.isEmpty, !front.contains(.localEdits) {
        front.insert(.localEdits, at: front.first == .settlePendingPulls ? 1 : 0)
      }
      if request != .protectedDataAvailable { front.append(request) }
      state.lane.queued = front + state.lane.queued
    }
  }

  /// Holds a typed set made while protected data is unavailable (see ``writeTyped(_:for:)``);
  /// `false` when the data is available and the set goes ahead.
  func holdTypedSetUntilProtectedData(
    _ value: PropertyListValue?, forKey key: String, keeping keeper: FieldKeeper? = nil
  ) -> Bool {
    guard !checkProtectedData() else { return false }
    state.withLock { state in
      state.status.isProtectedDataAvailable = false
      state.protectedData.hold(value, forKey: key, keeping: keeper)
      state.debug("typed set of \(key) held until protected data is available")
    }
    emitLogs()
    return true
  }

  /// A typed set of `key` held until protected data is available, if any (`.some(nil)`:
  /// a removal): what a typed read returns meanwhile.
  func heldTypedSet(forKey key: String) -> PropertyListValue?? {
    state.withLock { $0.protectedData.heldValue(forKey: key) }
  }

  /// iOS posted that protected data became available (or will become unavailable), or a
  /// suite that reports it did: look again, and run what waits.
  func protectedDataMayHaveChanged() {
    let available = checkProtectedData()
    let resume = state.withLock { state in
      state.status.isProtectedDataAvailable = available
      return available && state.protectedData.hasWork
    }
    if resume { run(.protectedDataAvailable) }
    if available { drainChangesIfIdle() }
  }

  /// The launch's or the foreground's `synchronize()`: put off while protected data is
  /// unavailable, and made once it is.
  func synchronizeUnlessProtected() {
    guard checkProtectedData() else {
      state.withLock { $0.protectedData.launchSynchronizeDeferred = true }
      return
    }
    synchronizeStore()
  }
}

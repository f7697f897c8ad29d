import Foundation

/// A coordinator's state, guarded by its lock. The lock is held only to read or change
/// these fields, never across a call into `UserDefaults`, the store, a notification
/// center or user code: those may call back into Zephyr (see <doc:Threading>).
///
/// Settings (``configuration``, ``monitoredKeys``) may change from any thread at any time;
/// everything else changes only in the running operation (see ``OperationLane``).
struct EngineState: Sendable {
  var configuration: SyncConfiguration {
    didSet { declarations &+= 1 }
  }
  var monitoredKeys: Set<String> = []
  /// Prefixes whose keys are monitored as they appear (`account.v2.`).
  var monitoredPrefixes: Set<String> = []
  /// Keys used through a ``SyncKey`` (monitored from their first use, and only then), with
  /// what the key declared at that use: the only place a typed key's strategy, capacity
  /// and compression live. The configuration's entries win (see ``strategy(of:)``); it is
  /// left as the app set it.
  var typedKeys: [String: KeyDeclaration] = [:] {
    didSet { declarations &+= 1 }
  }
  /// Counts the changes to ``configuration`` and ``typedKeys``: a key's strategy and
  /// capacity are unchanged while it is (see ``SettledKeys``).
  private(set) var declarations: UInt64 = 0
  var deviceID: String
  var ledger: Ledger
  var journal = LedgerJournal()
  /// Whether the ledger may be older than what this device wrote: a save failed, or at
  /// launch the domain was the same copy but its ledger file was missing or damaged. The
  /// device's own records then count as history (see ``Reconciler``).
  var ledgerMayBeStale = false
  /// Whether the store reset this device's history since launch (see
  /// ``historyWasReset()``), and the keys reconciled since.
  private(set) var historyReset = false
  private(set) var reconciledSinceReset: Set<String> = []
  /// What the status shows that the engine keeps nowhere else: times, the last event,
  /// the initial download, notes. Its settings and refusals are filled in when it is read
  /// (see ``statusSnapshot(isSignedIn:)``).
  var status = SyncStatus()
  /// The keys left alone, by the engine or a typed write, and why.
  var refusals = Refusals()
  /// The counters behind ``SyncCoordinator/metrics``, saved beside the ledger.
  var metrics = MetricsWindow()
  var budget = StoreBudget()
  /// The keys last decided to be left alone, and what from (skipped while that holds).
  var settled = SettledKeys()
  var lane = OperationLane()
  /// When the store's `synchronize()` is next called after batches.
  var synchronizing = SynchronizeSchedule()
  /// What waits for protected data to become available (see
  /// ``SyncCoordinator/admitsProtectedData(_:)``).
  var protectedData = ProtectedDataBacklog()
  /// Log lines not yet handed to the log handler; emitted once the lock is released.
  private(set) var logs: [LogMessage] = []

  static let ledgerIDKey = "Zephyr.ledgerID"

  // MARK: Ledger

  /// Sets (or, with `nil`, removes) a key's ledger entry, to be saved with the operation.
  /// The clock moves up to the entry's generation: what the ledger agrees on was read or
  /// written.
  mutating func setLedger(_ key: String, _ entry: LedgerEntry?) {
    if ledger[key] != entry {
      ledger[key] = entry
      journal.note(key, entry)
    }
    if let entry {
      observe(entry.generation)
      // A state may include writes above its own stamp.
      if let state = entry.state { observe(state.context.maximum) }
    }
  }

  /// Moves this device's Lamport clock up to `generation`, a generation it read or wrote.
  mutating func observe(_ generation: UInt64) {
    guard generation > ledger.clock else { return }
    ledger.clock = generation
    journal.clockMoved = true
  }

  /// Called when every key's history was reset by the store (an account change) or its
  /// writes were discarded (the initial download): until a key is reconciled once, a
  /// strategy does not merge this device's historyless value into the store's state,
  /// which wins as for a last-writer-wins key (the value is another account's, or was
  /// made before the cloud's values arrived, which the store discarded).
  mutating func historyWasReset() {
    historyReset = true
    reconciledSinceReset = []
  }

  /// Whether `key` would take the store's state (see ``takingStoreState(_:)``).
  func takesStoreState(_ key: String) -> Bool {
    historyReset && !reconciledSinceReset.contains(key)
  }

  /// Of `keys`, those that take the store's state (see ``historyWasReset()``); records
  /// them as reconciled.
  mutating func takingStoreState(_ keys: [String]) -> Set<String> {
    guard historyReset else { return [] }
    let taking = Set(keys).subtracting(reconciledSinceReset)
    reconciledSinceReset.formUnion(keys)
    return taking
  }

  /// Records `keys` as reconciled since the reset: a deliberate edit made after it (a
  /// typed set) is merged, not replaced by the store's state.
  mutating func markReconciled(_ keys: [String]) {
    guard historyReset else { return }
    reconciledSinceReset.formUnion(keys)
  }

  /// The id this process numbers its writes of strategy keys under: the device id and the
  /// ledger's incarnation. A device that starts its history over (a lost ledger, an
  /// account change) thereby writes under a new name, and a state can tell its earlier
  /// writes (seen and maybe removed) from its new ones.
  var replicaID: String {
    let id = deviceID + "." + ledger.incarnation
    return id.count <= SyncRecord.maximumOriginLength
      ? id : String(deviceID.prefix(SyncRecord.maximumOriginLength - 5)) + "." + ledger.incarnation
  }

  /// Forgets every key's history (an account change), keeping the epoch.
  mutating func resetLedger() {
    ledger.entries.removeAll()
    ledger.incarnation = Self.randomID(length: 4)
    journal.reset()
  }

  /// Starts a new, empty ledger under `epoch`: the domain was reset while running. The
  /// caller writes a new epoch into the domain itself (outside the lock) when it made one.
  mutating func replaceLedger(epoch: String) {
    // The clock only ever moves up: a lower one would number new writes below old ones.
    ledger = Ledger(epoch: epoch, clock: ledger.clock)
    journal.reset()
    note("the defaults domain was reset: history cleared, the store's values win")
  }

  // MARK: Recording

  mutating func debug(_ text: @autoclosure () -> String) {
    guard configuration.debugEnabled else { return }
    logs.append(LogMessage(level: .debug, text: text()))
  }

  /// A decision line that names a synced value: logged with the value redacted too.
  mutating func debug(_ line: LogLine) {
    guard configuration.debugEnabled else { return }
    logs.append(LogMessage(level: .debug, text: line.text, redactedText: line.redacted))
  }

  mutating func warn(_ text: String) {
    logs.append(LogMessage(level: .warning, text: text))
  }

  /// A problem with Zephyr's own state: a warning, and a line in ``SyncStatus/notes``.
  mutating func note(_ text: String) {
    if !status.notes.contains(text) { status.notes.append(text) }
    warn(text)
  }

  /// Records that `key` was left alone, and why.
  mutating func refuse(_ key: String, _ reason: RefusalReason) {
    if refusals[key] != reason {
      warn("refused key \(key): \(reason)")
      metrics.countRefusal(reason)
    }
    refusals.refuse(key, reason)
  }

  /// Keeps the keys Zephyr may write, in order and each once; records a refusal for
  /// every other one.
  mutating func admit(_ keys: [String]) -> [String] {
    var seen = Set<String>()
    return keys.filter { key in
      guard seen.insert(key).inserted else { return false }
      guard let refusal = KeyPolicy.refusal(of: key, limits: configuration.limits) else { return true }
      refuse(key, refusal)
      return false
    }
  }

  /// Takes the log lines recorded so far, with the handler to give them to.
  mutating func takeLogs() -> (logs: [LogMessage], handler: LogHandler?) {
    defer { logs = [] }
    return (logs, configuration.logHandler)
  }

  /// Logs a warning when usage crosses the warning threshold upwards, once per crossing.
  mutating func checkBudgetThreshold() {
    let limits = configuration.limits
    let byteShare = Double(budget.totalBytes) / Double(max(limits.maximumTotalBytes, 1))
    let keyShare = Double(budget.keyCount) / Double(max(limits.maximumKeyCount, 1))
    let above = max(byteShare, keyShare) >= configuration.warningThreshold
    if above, !budget.aboveThreshold {
      let percent = { (share: Double) in String(format: "%.0f%%", share * 100) }
      warn(
        "the store is at \(percent(byteShare)) of its \(limits.maximumTotalBytes) bytes and "
          + "\(percent(keyShare)) of its \(limits.maximumKeyCount) keys "
          + "(warning threshold \(percent(configuration.warningThreshold)))")
    }
    budget.aboveThreshold = above
  }

  /// The status with the budget's figures, the settings and the refusals filled in.
  func statusSnapshot(isSignedIn: Bool?) -> SyncStatus {
    var snapshot = status
    snapshot.limits = configuration.limits
    snapshot.refusedKeys = refusals.all
    snapshot.estimatedBytes = budget.totalBytes
    snapshot.keyCount = budget.keyCount
    snapshot.largestKeys = budget.largest(5)
    snapshot.keySizes = budget.allSizes
    snapshot.overheadBytes = budget.totalOverhead
    snapshot.isSignedIn = isSignedIn
    snapshot.monitoredKeys = monitoredKeys
    snapshot.monitoredPrefixes = monitoredPrefixes
    snapshot.waitingOperations = protectedData.count
    if let failure = journal.failure { snapshot.notes.append("ledger not saved: \(failure)") }
    return snapshot
  }

  static func randomID(length: Int) -> String {
    let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
    return String((0..<length).map { _ in alphabet.randomElement() ?? "z" })
  }
}

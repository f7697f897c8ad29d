import Foundation

/// One write an operation makes, where a simulated crash may strike.
enum WritePoint: Sendable, Equatable {
  case store(String)
  case defaults(String)
  case ledger
}

/// A coordinator's state, guarded by its lock.
struct EngineState {
  var configuration: SyncConfiguration
  var deviceID: String
  var ledger: Ledger
  /// Ledger entries changed since the last save (`nil`: removed); appended on save.
  var ledgerChanges: [String: LedgerEntry?] = [:]
  /// Whether the next save must rewrite the whole file (new, reset or unreadable ledger).
  var ledgerNeedsSnapshot = false
  /// Records in the ledger file, to decide when appending has gone on long enough.
  var ledgerRecords = 0
  var monitoredKeys: Set<String> = []
  var status: SyncStatus
  var budget = StoreBudget()
  /// Whether the running operation wrote to the store (it then ends with one `synchronize()`).
  var storeWritten = false
  /// Called for every pulled key between the decision and the check that the local value
  /// is still the one decided on. For tests that edit locally while a pull is decided.
  var beforePullWrite: (@Sendable (String) -> Void)?
  /// Asked before every write; answering `true` simulates a crash at that point: this
  /// write and every later one of the operation are skipped, as if the process died.
  /// For crash-point tests, which then restart the device.
  var crashBefore: (@Sendable (WritePoint) -> Bool)?
  private(set) var crashed = false

  // Effects of the running operation, released after the lock.
  private var logs: [LogMessage] = []
  private var changedKeys: Set<String> = []

  static let deviceIDKey = "Zephyr.deviceID"
  static let ledgerIDKey = "Zephyr.ledgerID"

  /// Reads the device id and the ledger, creating either when missing.
  static func load(domain: UserDefaultsDomain, ledgerFile: LedgerFile, configuration: SyncConfiguration)
    -> EngineState
  {
    let deviceID: String
    var rejectedID: String?
    if let configured = configuration.deviceID, !configured.isEmpty,
      configured.count <= SyncRecord.maximumOriginLength
    {
      deviceID = configured
    } else if let configured = configuration.deviceID {
      // Records written under it would not decode on other devices: use a generated id.
      rejectedID = configured
      deviceID = domain.bookkeepingString(forKey: deviceIDKey) ?? randomID(length: 6)
      domain.setBookkeepingString(deviceID, forKey: deviceIDKey)
    } else if let stored = domain.bookkeepingString(forKey: deviceIDKey), !stored.isEmpty {
      deviceID = stored
    } else {
      deviceID = randomID(length: 6)
      domain.setBookkeepingString(deviceID, forKey: deviceIDKey)
    }

    var status = SyncStatus(limits: configuration.limits)
    if let rejectedID {
      status.notes.append(
        "deviceID \"\(rejectedID.prefix(80))\" must be 1 to \(SyncRecord.maximumOriginLength) characters: using \(deviceID)"
      )
    }
    var ledger: Ledger
    var records = 0
    if let epoch = domain.bookkeepingString(forKey: ledgerIDKey), !epoch.isEmpty {
      ledger = Ledger(epoch: epoch)
      do {
        if let stored = try ledgerFile.load() {
          if stored.ledger.epoch == epoch {
            ledger = stored.ledger
            records = stored.records
            if stored.damagedTail {
              status.notes.append("ledger had a damaged tail: its last saves were ignored, older history kept")
            }
          } else {
            status.notes.append("ledger belongs to another copy of this domain: discarded, no history")
          }
        }
      } catch {
        status.notes.append("ledger unreadable (\(error)): discarded, no history")
      }
    } else {
      // A new or reset domain: whatever a ledger file says describes values it no longer has.
      ledger = Ledger(epoch: randomID(length: 12))
      domain.setBookkeepingString(ledger.epoch, forKey: ledgerIDKey)
    }
    var state = EngineState(configuration: configuration, deviceID: deviceID, ledger: ledger, status: status)
    state.ledgerRecords = records
    state.ledgerNeedsSnapshot = records == 0
    for note in status.notes { state.warn(note) }
    return state
  }

  /// Clears the history when the domain no longer carries this ledger's epoch (`epoch`,
  /// read with the operation's local values): the app reset or replaced its defaults
  /// while running. Like a new install, it then pulls from the store instead of pushing
  /// a delete for every key it lost.
  mutating func verifyEpoch(_ epoch: String?, of domain: UserDefaultsDomain) {
    guard epoch != ledger.epoch else { return }
    ledger = Ledger(epoch: Self.randomID(length: 12))
    ledgerChanges = [:]
    ledgerNeedsSnapshot = true
    domain.setBookkeepingString(ledger.epoch, forKey: Self.ledgerIDKey)
    if configuration.deviceID == nil { domain.setBookkeepingString(deviceID, forKey: Self.deviceIDKey) }
    let note = "the defaults domain was reset: history cleared, the store's values win"
    status.notes.append(note)
    warn(note)
  }

  private static func randomID(length: Int) -> String {
    let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
    return String((0..<length).map { _ in alphabet.randomElement() ?? "z" })
  }

  /// Whether the operation may perform the write at `point` (see ``crashBefore``).
  mutating func mayWrite(_ point: WritePoint) -> Bool {
    if crashed { return false }
    if crashBefore?(point) == true { crashed = true }
    return !crashed
  }

  // MARK: Recording

  mutating func debug(_ text: @autoclosure () -> String) {
    guard configuration.debugEnabled else { return }
    logs.append(LogMessage(level: .debug, text: text()))
  }

  mutating func warn(_ text: String) {
    logs.append(LogMessage(level: .warning, text: text))
  }

  /// Records that `key` was left alone, and why.
  mutating func refuse(_ key: String, _ reason: RefusalReason) {
    if status.refusedKeys[key] != reason { warn("refused key \(key): \(reason)") }
    status.refusedKeys[key] = reason
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

  /// The status with the budget's figures filled in.
  func statusSnapshot(isSignedIn: Bool?) -> SyncStatus {
    var snapshot = status
    snapshot.estimatedBytes = budget.totalBytes
    snapshot.keyCount = budget.keyCount
    snapshot.largestKeys = budget.largest(5)
    snapshot.overheadBytes = budget.totalOverhead
    snapshot.isSignedIn = isSignedIn
    snapshot.monitoredKeys = monitoredKeys
    return snapshot
  }

  /// Forgets every key's history (an account change), keeping the epoch.
  mutating func resetLedger() {
    ledger.entries.removeAll()
    ledgerChanges = [:]
    ledgerNeedsSnapshot = true
  }

  mutating func noteLocalChange(_ key: String) {
    changedKeys.insert(key)
  }

  /// Sets (or, with `nil`, removes) a key's ledger entry, to be saved with the operation.
  mutating func setLedger(_ key: String, _ entry: LedgerEntry?) {
    if ledger[key] != entry {
      ledger[key] = entry
      ledgerChanges[key] = .some(entry)
    }
  }

  /// What the operation leaves to do once the lock is released.
  struct Effects {
    var logs: [LogMessage]
    var changedKeys: Set<String>
    var logHandler: LogHandler?
  }

  mutating func takeEffects() -> Effects {
    defer {
      logs = []
      changedKeys = []
    }
    return Effects(logs: logs, changedKeys: changedKeys, logHandler: configuration.logHandler)
  }
}

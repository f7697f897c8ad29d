import Foundation

/// Every write one batch makes, planned from snapshots before any is made, as a value.
///
/// Planning (``EngineState/plan(_:now:)``) runs under the coordinator's lock and calls out to
/// nothing: it checks each write against the store's limits, sets the ledger entries
/// ahead of the writes (a pull's, and a merge's, with what to fall back to should its
/// `UserDefaults` write not happen), and words the log lines. The coordinator then
/// applies the plan outside the lock, in this order: save the ledger, write the store and
/// `UserDefaults` in plan order, settle the entries written ahead, save the ledger again.
/// A crash between any two of those writes loses nothing: a ledger ahead of the store is
/// repaired by the rules (the store "lost our write", which is published again); one
/// ahead of `UserDefaults` falls back at the next launch.
struct BatchPlan: Sendable {
  /// One write, in the order it is made.
  enum Write: Sendable, Equatable {
    /// A record to the store; for a merge, also its state (a value, or a delete) to
    /// `UserDefaults`.
    case store(key: String, record: PropertyListValue, merged: SyncRecord.Content?)
    /// A pulled state to `UserDefaults`.
    case local(key: String, content: SyncRecord.Content)

    var key: String {
      switch self {
      case .store(let key, _, _), .local(let key, _): key
      }
    }

    /// Whether the write also goes to `UserDefaults`.
    var writesLocally: Bool {
      switch self {
      case .store(_, _, let merged): merged != nil
      case .local: true
      }
    }
  }

  /// The writes, each with the decision-log line to emit once it is made.
  var writes: [(write: Write, log: LogLine)] = []
  /// Final ledger entries of the writes that were set ahead, applied once they are made.
  var settled: [String: LedgerEntry] = [:]
  /// The keys of the batch, and those of them refused.
  var keys: [String] = []
  var refused: Set<String> = []
  var pulls = 0
  /// The store bytes of each record the plan writes, as the budget sized it (for
  /// ``SyncMetrics``).
  var recordBytes: [String: Int] = [:]
  var now = Date.distantPast
  /// Records of compressed keys compressed ahead, with no lock held (see
  /// ``BatchDecisions/precompress(_:keys:deviceID:)``).
  var precompressed: [String: Precompressed] = [:]
  /// See ``BatchDecisions/typedBases``: a local write of a key is made only if no typed
  /// write of it was recorded since.
  var typedBases: [String: UInt64] = [:]
}

/// What one batch decided, with the snapshots it decided from.
struct BatchDecisions: Sendable {
  var keys: [String]
  var decisions: [String: Reconciler.Decision]
  /// Local values when the batch was read.
  var local: [String: PropertyListValue]
  /// Local values of the pulled keys, read again just before planning: a pull never
  /// overwrites an edit made while it was decided.
  var current: [String: PropertyListValue]
  /// Store values when the batch was read.
  var remote: [String: PropertyListValue]
  /// The records the plan will write for compressed keys, compressed ahead.
  var precompressed: [String: Precompressed] = [:]
  /// Per key, the typed writes recorded when the batch read it (see
  /// ``KeyWrites/batchBase``); a key missing had one landing.
  var typedBases: [String: UInt64] = [:]
}

extension EngineState {
  /// Plans the writes of a decided batch: ledger entries set ahead, limits checked,
  /// refusals and log lines recorded, at `now` (read from the configured clock before
  /// the lock was taken). Calls out to nothing.
  mutating func plan(_ batch: BatchDecisions, now: Date) -> BatchPlan {
    var plan = BatchPlan(keys: batch.keys, now: now, precompressed: batch.precompressed)
    plan.typedBases = batch.typedBases
    for key in batch.keys {
      guard let decision = batch.decisions[key] else { continue }
      if let problem = decision.problem {
        refuse(key, problem)
        plan.refused.insert(key)
      }
      if batch.remote[key] == nil || budget.sizes[key] == nil {
        budget.record(key, storeValue: batch.remote[key])
      }
      switch decision.action {
      case .none:
        break
      case .skip(let reason):
        debug("skip \(key): \(reason)")
      case .adopt(let stamp, let over):
        budget.record(key, storeValue: batch.remote[key])
        setLedger(key, LedgerEntry(stamp: stamp, agreed: LedgerEntry.Agreed(batch.local[key]), madeOver: over))
        debug("adopt \(key) g\(stamp.generation) (same value on both sides)")
      case .push(let generation, let value, let reason, let over):
        let merged: SyncRecord.Content? = reason.writesLocally ? value.map { .value($0) } ?? .deleted(plan.now) : nil
        let write = PlannedRecord(
          stamp: Stamp(generation: generation, origin: deviceID), value: value, merged: merged, over: over)
        planRecord(key, write, before: batch.local[key], remote: batch.remote[key], reason: reason, &plan)
      case .republish(let stamp, let value, let reason, let over):
        let write = PlannedRecord(stamp: stamp.republished(by: deviceID), value: value, merged: nil, over: over)
        planRecord(key, write, before: batch.local[key], remote: batch.remote[key], reason: reason, &plan)
      case .pull(let stamp, let content, let reason, let over):
        budget.record(key, storeValue: batch.remote[key])
        planPull(key, SyncRecord(stamp: stamp, content: content, madeOver: over), reason: reason, batch: batch, &plan)
      case .merge(let merge):
        planMerge(key, merge, batch: batch, &plan)
      }
    }
    return plan
  }

  /// Plans a record write, unless it does not fit the limits (then the key is refused and
  /// keeps its ledger entry, so the next sync tries again).
  private mutating func planRecord(
    _ key: String, _ write: PlannedRecord, before: PropertyListValue?, remote: PropertyListValue?,
    reason: SyncAction.Reason, _ plan: inout BatchPlan
  ) {
    let (stamp, value) = (write.stamp, write.value)
    let content: SyncRecord.Content = value.map { .value($0) } ?? .deleted(plan.now)
    let plain = SyncRecord(generation: stamp.generation, origin: stamp.origin, content: content, madeOver: write.over)
      .encoded
    // (A tombstone is always plain: small, and read by every build.)
    let (form, stored) = value == nil ? (plain, "") : storedForm(of: plain, key: key, plan)
    let record = sentForm(of: form, plan)
    let size = PropertyListValue.storeSize(key: key, value: record)
    if let refusal = budget.refusal(forWriting: key, size: size, limits: configuration.limits) {
      refuse(key, refusal)
      plan.refused.insert(key)
      // Read, even when not answered: later writes are numbered above it.
      if case .record(let read) = RemoteState(storeValue: remote) { observe(read.generation) }
      return
    }
    // Counted now, so the next planned write of the batch is checked against it too.
    budget.record(key, storeValue: record)
    plan.recordBytes[key] = size
    let entry = LedgerEntry(stamp: stamp, agreed: LedgerEntry.Agreed(value), madeOver: write.over)
    if write.merged != nil {
      // The merged value also goes to UserDefaults: written ahead like a pull.
      setLedger(key, entry.writtenAhead(replacing: before, previous: ledger[key]))
      plan.settled[key] = entry
    } else {
      setLedger(key, entry)
    }
    let log = LogLine(
      "push \(key) g\(stamp.generation) ", value: value.map(\.logDescription) ?? "deleted", isValue: value != nil,
      " (\(reason.rawValue)\(stored))")
    plan.writes.append((.store(key: key, record: record, merged: write.merged), log))
  }

  /// Plans a pull, unless the key was edited locally while the pull was decided.
  private mutating func planPull(
    _ key: String, _ record: SyncRecord, reason: SyncAction.Reason, batch: BatchDecisions, _ plan: inout BatchPlan
  ) {
    let (stamp, content) = (record.stamp, record.content)
    let current = batch.current[key]
    // Read, even when not taken: later writes are numbered above it.
    observe(stamp.generation)
    guard LedgerEntry.Agreed(current) == LedgerEntry.Agreed(batch.local[key]) else {
      debug("keep \(key): edited locally while its pull was decided")
      return
    }
    plan.pulls += 1
    let entry = LedgerEntry(agreeingWith: record)
    let log = LogLine(
      "pull \(key) g\(stamp.generation) ", value: content.logDescription, isValue: content.value != nil,
      " (\(reason.rawValue))")
    if LedgerEntry.Agreed(current) == entry.agreed {
      setLedger(key, entry)
      debug(log)
    } else {
      setLedger(key, entry.writtenAhead(replacing: current, previous: ledger[key]))
      plan.settled[key] = entry
      plan.writes.append((.local(key: key, content: content), log))
    }
  }

  /// Settles an applied plan: the entries written ahead take their final state (those of
  /// writes that were not made fall back), refusals of keys handled cleanly are lifted,
  /// and the status times are set.
  mutating func commit(_ plan: BatchPlan, made: Set<String>) {
    for (key, entry) in plan.settled {
      if made.contains(key) {
        setLedger(key, entry)
      } else if let ahead = ledger[key], ahead.pendingPull != nil {
        setLedger(key, ahead.pendingPull?.previous.map(LedgerEntry.init(previous:)))
      }
    }
    // A key leaves the refused list once a batch handles it without refusing it again.
    for key in plan.keys where !plan.refused.contains(key) { refusals.lift(key) }
    if plan.writes.contains(where: { if case .store = $0.write { made.contains($0.write.key) } else { false } }) {
      status.lastPush = plan.now
    }
    if plan.pulls > 0 { status.lastPull = plan.now }
  }
}

extension LedgerEntry {
  /// This entry, marked as written ahead of a `UserDefaults` write that replaces `before`.
  func writtenAhead(replacing before: PropertyListValue?, previous: LedgerEntry?) -> LedgerEntry {
    var ahead = self
    ahead.pendingPull = PendingPull(
      localBefore: Agreed(before),
      previous: previous.map {
        Previous(
          generation: $0.generation, agreed: $0.agreed, origin: $0.origin, state: $0.state, madeOver: $0.madeOver)
      })
    return ahead
  }

  /// The entry a pending pull falls back to.
  init(previous: Previous) {
    self.init(generation: previous.generation, agreed: previous.agreed, origin: previous.origin, state: previous.state)
    madeOver = previous.madeOver
  }
}

extension SyncRecord.Content {
  /// The value, or `nil` for a tombstone.
  var value: PropertyListValue? {
    if case .value(let value) = self { value } else { nil }
  }

  /// The content for the decision log: the value, or `deleted`.
  var logDescription: String {
    switch self {
    case .value(let value): value.logDescription
    case .deleted: "deleted"
    }
  }
}

/// A decision-log line naming a synced value, in full and with the value redacted.
struct LogLine: Sendable, Equatable {
  var text: String
  var redacted: String

  /// `prefix`, the value (or `<private>` in ``redacted`` when `isValue`), `suffix`.
  init(_ prefix: String, value: String, isValue: Bool, _ suffix: String) {
    text = prefix + value + suffix
    redacted = prefix + (isValue ? "<private>" : value) + suffix
  }
}

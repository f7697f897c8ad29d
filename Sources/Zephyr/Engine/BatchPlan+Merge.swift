import Foundation

/// A last-writer-wins record write the plan makes: its stamp and value, and the merged
/// value to write locally too (a resolver's).
struct PlannedRecord {
  var stamp: Stamp
  var value: PropertyListValue?
  /// What a resolver's merge writes to `UserDefaults` too (a value, or a delete); `nil`
  /// for none.
  var merged: SyncRecord.Content?
  /// The foreign values the record is made over, named in it (see ``ForeignName``).
  var over: [ForeignName] = []
}

extension EngineState {
  /// Plans a strategy key's merge: the ledger caches the joined state (written ahead of a
  /// `UserDefaults` write, with the state to fall back to), the record goes to the store
  /// when it lacks something, and the value to `UserDefaults` when it differs. A merge
  /// that would write a key edited locally while it was decided is left for the next
  /// reconcile, which merges that edit too. A record over the limits is refused, and the
  /// key keeps its ledger entry, so the next sync tries again.
  mutating func planMerge(_ key: String, _ merge: StrategyMerge, batch: BatchDecisions, _ plan: inout BatchPlan) {
    let before = batch.local[key]
    // Read, even when not taken: later writes are numbered above it.
    observe(max(merge.agreed.generation, merge.state.context.maximum))
    // (A merge that writes locally was read again with the pulls: `current` holds it.)
    if merge.local != nil, LedgerEntry.Agreed(batch.current[key]) != LedgerEntry.Agreed(before) {
      debug("keep \(key): edited locally while its merge was decided")
      return
    }
    let written: SyncRecord.Content? = merge.local.map { $0.map { .value($0) } ?? .deleted(plan.now) }
    let entry = LedgerEntry(
      generation: merge.agreed.generation, agreed: LedgerEntry.Agreed(merge.local ?? before),
      origin: merge.agreed.origin, state: merge.state)
    let shown = merge.value.map(\.logDescription) ?? "deleted"
    if let stamp = merge.push {
      let (form, stored) = storedForm(
        of: ReplicaRecord(stamp: stamp, state: merge.state, writtenAt: plan.now).encoded, key: key, plan)
      let record = sentForm(of: form, plan)
      let size = PropertyListValue.storeSize(key: key, value: record)
      if let refusal = budget.refusal(forWriting: key, size: size, limits: configuration.limits) {
        refuse(key, refusal)
        plan.refused.insert(key)
        return
      }
      budget.record(key, storeValue: record)
      plan.recordBytes[key] = size
      if written != nil {
        setLedger(key, entry.writtenAhead(replacing: before, previous: ledger[key]))
        plan.settled[key] = entry
      } else {
        setLedger(key, entry)
      }
      let log = LogLine(
        "push \(key) g\(stamp.generation) ", value: shown, isValue: merge.value != nil,
        " (\(merge.reason.rawValue), \(merge.state.kind.rawValue)\(stored))")
      plan.writes.append((.store(key: key, record: record, merged: written), log))
    } else if let written {
      budget.record(key, storeValue: batch.remote[key])
      plan.pulls += 1
      setLedger(key, entry.writtenAhead(replacing: before, previous: ledger[key]))
      plan.settled[key] = entry
      let log = LogLine(
        "pull \(key) g\(merge.agreed.generation) ", value: shown, isValue: merge.value != nil,
        " (\(merge.reason.rawValue), \(merge.state.kind.rawValue))")
      plan.writes.append((.local(key: key, content: written), log))
    } else {
      budget.record(key, storeValue: batch.remote[key])
      setLedger(key, entry)
      debug("adopt \(key) g\(merge.agreed.generation) (\(merge.reason.rawValue), \(merge.state.kind.rawValue))")
    }
  }
}

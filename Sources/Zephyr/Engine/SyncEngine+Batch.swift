import Foundation

/// One batch, walked from the values read to the writes made:
/// decide (``Reconciler``, no lock: a resolver is user code) → read pulled keys again →
/// plan (``BatchPlan``, under the lock, calling nothing) → apply (no lock) → commit
/// (under the lock).
extension SyncEngine {
  /// Reconciles `keys` from the given snapshots; returns the keys written to the store.
  ///
  /// The `presumed` keys' local values were not read but taken from the ledger (see
  /// ``agreedLocalValues(of:)``): they are read with the pulled keys, and those found
  /// otherwise are reconciled again from the values read.
  @discardableResult
  func reconcile(
    _ keys: [String], local: [String: PropertyListValue], remote: [String: PropertyListValue],
    policy: MismatchPolicy, presumed: Set<String> = [], _ effects: inout OperationEffects
  ) -> Set<String> {
    // Another process on a shared suite may have agreed on a later state of a key, which
    // this process's inputs do not show: no key is taken as settled there.
    let sharing = sharesSuite
    let keys = sharing ? keys : unsettled(keys, local: local, remote: remote, policy: policy, presumed: presumed)
    guard !keys.isEmpty else { return [] }
    let shared = sharing ? callingOut { domain.sharedAgreements(of: keys, local: local) } : [:]
    let read = readLedger(of: keys, local: local, remote: remote, shared: shared, policy: policy)
    // Before deciding, which may call user code: a typed write recorded from now on is in
    // no value the batch decides from, so the batch does not write over it.
    let typedBases = state.withLock { state in
      var bases: [String: UInt64] = [:]
      for key in keys { bases[key] = state.lane.keyWrites[key, default: KeyWrites()].batchBase }
      return bases
    }
    let decisions = decide(read.inputs, read.context, callingOut: read.callsOut)
    effects.differingFromStore += decisions.values.reduce(0) { $0 + ($1.action.differsFromStore ? 1 : 0) }
    let (current, epoch) = readPulledKeysAgain(keys, decisions, local: local, presumed: presumed)
    // A presumed value found otherwise (an edit not pushed yet, or made meanwhile) is
    // decided again, after this batch, from the value read.
    let unconfirmed = Set(
      presumed.filter { LedgerEntry.Agreed(current[$0]) != LedgerEntry.Agreed(local[$0]) })
    let reset = epoch.map { epoch in state.withLock { $0.ledger.epoch != epoch } } ?? false
    let batchKeys = unconfirmed.isEmpty ? keys : keys.filter { !unconfirmed.contains($0) }
    // Compressed here, with no lock held: the plan checks sizes under its lock.
    let precompressed = BatchDecisions.precompress(
      decisions, keys: read.compressed.subtracting(unconfirmed), deviceID: read.context.deviceID)
    let batch = BatchDecisions(
      keys: batchKeys, decisions: decisions, local: local, current: current, remote: remote,
      precompressed: precompressed, typedBases: typedBases)
    let now = self.now()
    if effects.measuresDelivery { countDeliveryDelays(batchKeys, decisions, remote: remote, now: now) }
    let plan = state.withLock { state in
      state.settled.record(read.inputs, read.context, declarations: read.declarations, decisions: decisions)
      return state.plan(batch, now: now)
    }
    var written = apply(plan, &effects)
    if sharing { shareAgreements(of: batchKeys, replacing: shared) }
    // Streams read each observed key again when the operation ends: pulled, merged, or
    // the local value the batch read (a local edit it pushed, or one it kept). They skip
    // repeats.
    effects.reconciledObserved.formUnion(batchKeys.filter(effects.observed.contains))
    // A reset found by the read clears the history first: the keys it emptied are then
    // decided as on a new install, which pulls and removes nothing.
    if reset, let epoch { verifyEpoch(epoch) }
    if !unconfirmed.isEmpty {
      state.withLock { $0.debug("\(unconfirmed.count) key(s) found edited since agreed: decided again") }
      let found = current.filter { unconfirmed.contains($0.key) }
      written.formUnion(reconcile(unconfirmed.sorted(), local: found, remote: remote, policy: policy, &effects))
    }
    return written
  }

  /// `keys` but those settled (see ``SettledKeys``): left alone last time from the very
  /// inputs read now. A key whose local value is presumed, not read, is decided, so that
  /// the value is confirmed. Debug builds decide the settled keys all the same and assert
  /// that nothing is to be done, so every test and randomized scenario checks the
  /// shortcut.
  func unsettled(
    _ keys: some Sequence<String>, local: [String: PropertyListValue], remote: [String: PropertyListValue],
    policy: MismatchPolicy = .preferLocal, presumed: Set<String> = []
  ) -> [String] {
    let (unsettled, settled) = state.withLock { state in
      state.partitionSettled(keys, local: local, remote: remote, policy: policy, presumed: presumed)
    }
    #if DEBUG
      if !settled.isEmpty {
        let read = readLedger(of: settled, local: local, remote: remote, shared: [:], policy: policy)
        for input in read.inputs {
          let again = callingOut { Reconciler.decide(input, read.context) }
          assert(again == Reconciler.Decision(action: .none), "\(input.key) settled, but deciding it does something")
        }
      }
    #endif
    return unsettled
  }

  /// The one locked read of a batch: each key's ledger entry (a pull written ahead
  /// before a crash settled against the local value first, a later state another process
  /// agreed on taken), what holds for the whole batch, and whether deciding calls user
  /// code (a resolver, or a custom strategy).
  private func readLedger(
    of keys: [String], local: [String: PropertyListValue], remote: [String: PropertyListValue],
    shared: [String: LedgerEntry], policy: MismatchPolicy
  ) -> (
    inputs: [Reconciler.Input], context: Reconciler.Context, declarations: UInt64, callsOut: Bool,
    compressed: Set<String>
  ) {
    state.withLock { state in
      let taking = state.takingStoreState(keys)
      let inputs = keys.map { key in
        if let entry = state.ledger[key], entry.pendingPull != nil {
          state.setLedger(key, entry.resolved(local: local[key]))
        }
        if let agreed = shared[key], state.ledger[key].map({ agreed.stamp > $0.stamp }) ?? true {
          state.setLedger(key, agreed)
        }
        return Reconciler.Input(
          key: key, local: local[key], storeValue: remote[key], ledger: state.ledger[key],
          strategy: state.strategy(of: key), capacity: state.capacity(of: key),
          takingStore: taking.contains(key))
      }
      let context = Reconciler.Context(
        policy: policy, resolver: state.configuration.conflictResolver,
        ownOrigin: state.ledgerMayBeStale ? state.deviceID : nil, clock: state.ledger.clock,
        deviceID: state.deviceID, replicaID: state.replicaID)
      return (
        inputs, context, state.declarations, context.resolver != nil || state.hasCustomStrategy,
        Set(keys.filter(state.compresses))
      )
    }
  }

  /// Decides every key, with no lock held: the resolver and custom strategies are user
  /// code, and may wait for another thread that calls in meanwhile.
  private func decide(
    _ inputs: [Reconciler.Input], _ context: Reconciler.Context, callingOut callsOut: Bool
  ) -> [String: Reconciler.Decision] {
    let decideAll = {
      var decisions: [String: Reconciler.Decision] = [:]
      decisions.reserveCapacity(inputs.count)
      for input in inputs { decisions[input.key] = Reconciler.decide(input, context) }
      return decisions
    }
    // The resolver and custom strategies are user code: a call-out.
    return callsOut ? callingOut(as: .inResolver, decideAll) : decideAll()
  }

  /// Pulls must not overwrite an edit made while they were decided: the pulled keys (and
  /// merges that write locally) are read again, with the `presumed` keys, all at once (on
  /// Linux the first read after a write costs the whole domain). Returns their values now,
  /// and the ledger epoch read with them (`.some(nil)`: none; `nil` when nothing was read).
  private func readPulledKeysAgain(
    _ keys: [String], _ decisions: [String: Reconciler.Decision], local: [String: PropertyListValue],
    presumed: Set<String>
  ) -> (values: [String: PropertyListValue], epoch: String??) {
    let pulled = Set(keys).filter { key in
      switch decisions[key]?.action {
      case .pull?: true
      case .merge(let merge)?: merge.local != nil
      default: false
      }
    }
    if let hook = testHooks.withLock({ $0.beforePullWrite }) {
      callingOut { for key in keys where pulled.contains(key) { hook(key) } }
    }
    let reading = keys.filter { presumed.contains($0) || pulled.contains($0) }
    guard !reading.isEmpty else { return ([:], nil) }
    let current = callingOut {
      domain.values(forKeys: reading) { key, value in local[key].map(value.isSameValue(as:)) ?? false }
    }
    return (current.values, .some(current.epoch))
  }

  /// Whether other processes sync this suite (see ``SyncConfiguration/sharedByProcesses``).
  var sharesSuite: Bool {
    state.withLock { $0.configuration.sharedByProcesses } ?? domain.name.hasPrefix("group.")
  }

  /// Writes the settled agreed states of `keys` that differ from what the suite holds.
  func shareAgreements(of keys: [String], replacing shared: [String: LedgerEntry]) {
    let updates = state.withLock { state in
      keys.compactMap { key -> (String, LedgerEntry?)? in
        let entry = state.ledger[key]
        guard entry?.pendingPull == nil, entry != shared[key] else { return nil }
        return (key, entry)
      }
    }
    for (key, entry) in updates {
      let mirror = SharedAgreement.key(for: key)
      writeLocally(mirror, entry.map { SharedAgreement.encode($0) })
    }
  }

  /// Makes a plan's writes in order, the ledger saved ahead of them; then commits it.
  /// Returns the keys written to the store.
  private func apply(_ plan: BatchPlan, _ effects: inout OperationEffects) -> Set<String> {
    // First save: the entries planned ahead of the writes (a pull's with the state to fall
    // back to), so that a crash between two writes below loses nothing. The operation
    // saves again when it ends (``execute(_:)``), with the entries ``EngineState/commit(_:made:)``
    // settled once the writes were made.
    if !plan.writes.isEmpty { saveLedger() }
    let sharing = plan.writes.isEmpty ? false : sharesSuite
    var made = Set<String>()
    var written = Set<String>()
    var logs: [LogLine] = []
    for (write, log) in plan.writes {
      switch write {
      case .store(let key, let record, let merged):
        if let merged, !beginLocalWrite(key, merged.value, plan) { continue }
        guard mayWrite(.store(key)) else {
          if merged != nil { endLocalWrite(key, made: false) }
          continue
        }
        callingOut { store.setValue(record, forKey: key) }
        written.insert(key)
        effects.storeWritten = true
        if let merged {
          if sharing { shareAhead(key, plan) }
          let made = writeLocally(key, merged.value)
          endLocalWrite(key, made: made)
          guard made else { continue }
          effects.changedKeys.insert(key)
        }
      case .local(let key, let content):
        guard beginLocalWrite(key, content.value, plan) else { continue }
        if sharing { shareAhead(key, plan) }
        let made = writeLocally(key, content.value)
        endLocalWrite(key, made: made)
        guard made else { continue }
        effects.changedKeys.insert(key)
      }
      made.insert(write.key)
      logs.append(log)
    }
    let changed = effects.changedKeys
    state.withLock { state in
      for log in logs { state.debug(log) }
      state.commit(plan, made: made)
      state.metrics.countStoreWrites(written.compactMap { plan.recordBytes[$0] })
      // A typed write of a key Zephyr has just written is read again before it is pushed:
      // which of the two writes came last, only UserDefaults knows.
      for key in changed where state.lane.typedWrites[key] != nil { state.lane.typedWrites[key] = .reread }
    }
    return written
  }

  /// On a suite shared by processes, writes the agreement a local write of `key` settles,
  /// marked pending, ahead of that write (see ``SharedAgreement``): another process that
  /// finds the write made, this one having died before settling it, takes the agreement
  /// instead of taking the value for an edit of its own.
  private func shareAhead(_ key: String, _ plan: BatchPlan) {
    guard let entry = plan.settled[key] else { return }
    writeLocally(SharedAgreement.key(for: key), SharedAgreement.encode(entry, pending: true))
  }

  /// Notes that the batch writes `value` to `key` now, unless a typed write of the key
  /// was recorded since the batch read it, or was landing then (``KeyWrites``): that
  /// write could land after this one and replace it, or be replaced by it. Then the key
  /// is left to the typed write's push, which merges what the batch would have written,
  /// and this returns `false`.
  private func beginLocalWrite(_ key: String, _ value: PropertyListValue?, _ plan: BatchPlan) -> Bool {
    state.withLock { state in
      guard state.lane.keyWrites[key, default: KeyWrites()].admitsBatchWrite(from: plan.typedBases[key]) else {
        // (When this batch is that push, having taken the write's record before it landed,
        // the typed write marks the key to be read again once it returns.)
        state.debug("keep \(key): set locally since the batch read it, its push follows")
        return false
      }
      state.lane.keyWrites[key, default: KeyWrites()].batchWriting = .some(value)
      return true
    }
  }

  /// Notes that the batch's write of `key` returned (`made`: it was written), and wakes
  /// element edits waiting to read the key.
  private func endLocalWrite(_ key: String, made: Bool) {
    state.withLock { state in
      state.lane.keyWrites[key, default: KeyWrites()].batchWriting = nil
      if made { state.lane.keyWrites[key, default: KeyWrites()].batchWrites += 1 }
    }
    signalKeyWrites()
  }

  /// Wakes element edits waiting for a write of a key to return.
  func signalKeyWrites() {
    keyWritesSettled.lock()
    keyWritesSettled.broadcast()
    keyWritesSettled.unlock()
  }
}

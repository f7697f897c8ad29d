import Foundation

extension SyncCoordinator {
  /// One write a batch will make, planned before any is made.
  private enum PlannedWrite {
    /// A record to the store (and, for a merged value, the value to `UserDefaults`).
    case store(key: String, record: PropertyListValue, merged: PropertyListValue?, log: String)
    /// A pulled state to `UserDefaults`.
    case defaults(key: String, content: SyncRecord.Content, log: String)
  }

  /// Decides every key with the ``Reconciler``, then carries the actions out. Returns the
  /// keys written to the store.
  ///
  /// The order makes a crash at any point safe: first every decision, then the ledger
  /// entries of all planned writes are saved ahead (a pull's, and a merge's, with what to
  /// fall back to should its `UserDefaults` write not happen), then the store and
  /// `UserDefaults` writes, then the final ledger entries. A ledger that is ahead of the
  /// store is repaired by the rules (the store "lost our write", which is published
  /// again); one that is ahead of `UserDefaults` falls back.
  @discardableResult
  func reconcile(
    _ keys: [String], local: [String: PropertyListValue], remote: [String: PropertyListValue],
    policy: MismatchPolicy, _ state: inout EngineState
  ) -> Set<String> {
    var refused = Set<String>()
    var decisions: [(key: String, action: SyncAction)] = []
    for key in keys {
      var remoteState = RemoteState(storeValue: remote[key])
      if case .record(let record) = remoteState,
        let reason = Generation.implausibility(of: record.generation, agreed: state.ledger[key]?.generation ?? 0)
      {
        remoteState = .malformed(reason: reason)
      }
      if remote[key] == nil || state.budget.sizes[key] == nil {
        state.budget.record(key, storeValue: remote[key])
      }
      switch remoteState {
      case .malformed(let reason):
        state.refuse(key, .malformedRecord(reason))
        refused.insert(key)
      case .unsupported(let version):
        state.refuse(key, .unsupportedFormat(version))
        refused.insert(key)
      case .absent, .record, .foreign:
        break
      }
      // A pull written ahead before a crash is settled against the local value first.
      if let entry = state.ledger[key], entry.pendingPull != nil {
        state.setLedger(key, entry.resolved(local: local[key]))
      }
      let action = Reconciler.decide(
        key: key, local: local[key], remote: remoteState, ledger: state.ledger[key], policy: policy,
        resolver: state.configuration.conflictResolver)
      if action != .none { decisions.append((key, action)) }
    }

    // Pulls must not overwrite an edit made while they were decided: read the pulled
    // keys again, all at once (on Linux the first read after a write costs the whole domain).
    let pulledKeys = decisions.compactMap { if case .pull = $0.action { $0.key } else { nil } }
    for key in pulledKeys { state.beforePullWrite?(key) }
    let current =
      pulledKeys.isEmpty
      ? [:]
      : domain.values(forKeys: pulledKeys) { key, value in local[key].map(value.isSameValue(as:)) ?? false }.values

    let now = state.configuration.clock()
    var planned: [PlannedWrite] = []
    var settled: [String: LedgerEntry] = [:]
    var pulls = 0
    for (key, action) in decisions {
      switch action {
      case .none, .skip:
        if case .skip(let reason) = action { state.debug("skip \(key): \(reason)") }
      case .adopt(let stamp):
        state.budget.record(key, storeValue: remote[key])
        state.setLedger(key, LedgerEntry(stamp: stamp, agreed: LedgerEntry.Agreed(local[key])))
        state.debug("adopt \(key) g\(stamp.generation) (same value on both sides)")
      case .push(let generation, let value, let reason):
        let stamp = Stamp(generation: generation, origin: state.deviceID)
        let merged = reason == .resolverMerged ? value : nil
        guard
          let write = planRecord(
            key, stamp: stamp, value: value, merged: merged, before: local[key], reason: reason, now: now, &state,
            settled: &settled)
        else {
          refused.insert(key)
          continue
        }
        planned.append(write)
      case .republish(let stamp, let value, let reason):
        // A republished foreign value (empty origin) goes out as this device's write.
        let origin = stamp.origin.isEmpty ? state.deviceID : stamp.origin
        let republished = Stamp(generation: max(stamp.generation, 1), origin: origin)
        guard
          let write = planRecord(
            key, stamp: republished, value: value, merged: nil, before: local[key], reason: reason, now: now,
            &state, settled: &settled)
        else {
          refused.insert(key)
          continue
        }
        planned.append(write)
      case .pull(let stamp, let content, let reason):
        state.budget.record(key, storeValue: remote[key])
        guard LedgerEntry.Agreed(current[key]) == LedgerEntry.Agreed(local[key]) else {
          state.debug("keep \(key): edited locally while its pull was decided")
          continue
        }
        pulls += 1
        let entry = LedgerEntry(stamp: stamp, agreed: LedgerEntry.Agreed(content))
        let log = "pull \(key) g\(stamp.generation) \(Self.describe(content)) (\(reason.rawValue))"
        if LedgerEntry.Agreed(current[key]) == entry.agreed {
          state.setLedger(key, entry)
          state.debug(log)
        } else {
          state.setLedger(key, Self.writtenAhead(entry, before: current[key], previous: state.ledger[key]))
          settled[key] = entry
          planned.append(.defaults(key: key, content: content, log: log))
        }
      }
    }

    if !planned.isEmpty { saveLedgerIfNeeded(&state) }
    var written = Set<String>()
    for write in planned {
      switch write {
      case .store(let key, let record, let merged, let log):
        guard state.mayWrite(.store(key)) else { break }
        store.setValue(record, forKey: key)
        written.insert(key)
        if let merged {
          guard state.mayWrite(.defaults(key)) else { break }
          domain.set(merged, forKey: key)
          state.noteLocalChange(key)
        }
        state.debug(log)
      case .defaults(let key, let content, let log):
        guard state.mayWrite(.defaults(key)) else { break }
        switch content {
        case .value(let value): domain.set(value, forKey: key)
        case .deleted: domain.remove(forKey: key)
        }
        state.noteLocalChange(key)
        state.debug(log)
      }
    }
    if !state.crashed {
      for (key, entry) in settled { state.setLedger(key, entry) }
    }

    // A key leaves the refused list once a batch handles it without refusing it again.
    for key in keys where !refused.contains(key) && state.status.refusedKeys[key] != nil {
      state.status.refusedKeys[key] = nil
    }
    if !written.isEmpty {
      state.status.lastPush = now
      state.storeWritten = true
    }
    if pulls > 0 { state.status.lastPull = now }
    return written
  }

  /// Plans one record write: checks it against the limits (`nil`, with the key refused,
  /// when it does not fit; the ledger keeps its old state then, so the next sync tries
  /// again) and sets its ledger entry, written ahead.
  private func planRecord(
    _ key: String, stamp: Stamp, value: PropertyListValue?, merged: PropertyListValue?,
    before: PropertyListValue?, reason: SyncAction.Reason, now: Date, _ state: inout EngineState,
    settled: inout [String: LedgerEntry]
  ) -> PlannedWrite? {
    let content: SyncRecord.Content = value.map { .value($0) } ?? .deleted(now)
    let record = SyncRecord(generation: stamp.generation, origin: stamp.origin, content: content).encoded
    let size = PropertyListValue.storeSize(key: key, value: record)
    if let refusal = state.budget.refusal(forWriting: key, size: size, limits: state.configuration.limits) {
      state.refuse(key, refusal)
      return nil
    }
    // Counted now, so the next planned write of the batch is checked against it too.
    state.budget.record(key, storeValue: record)
    let entry = LedgerEntry(stamp: stamp, agreed: LedgerEntry.Agreed(value))
    if merged != nil {
      // The merged value also goes to UserDefaults: written ahead like a pull.
      state.setLedger(key, Self.writtenAhead(entry, before: before, previous: state.ledger[key]))
      settled[key] = entry
    } else {
      state.setLedger(key, entry)
    }
    let log = "push \(key) g\(stamp.generation) \(value.map(\.logDescription) ?? "deleted") (\(reason.rawValue))"
    return .store(key: key, record: record, merged: merged, log: log)
  }

  /// `entry`, marked as written ahead of a `UserDefaults` write that replaces `before`.
  private static func writtenAhead(
    _ entry: LedgerEntry, before: PropertyListValue?, previous: LedgerEntry?
  ) -> LedgerEntry {
    var ahead = entry
    ahead.pendingPull = LedgerEntry.PendingPull(
      localBefore: LedgerEntry.Agreed(before),
      previous: previous.map { LedgerEntry.Previous(generation: $0.generation, agreed: $0.agreed, origin: $0.origin) })
    return ahead
  }

  /// Removes tombstones older than the configured lifetime from the store, giving their
  /// keys back. The ledger keeps the delete, so this device never pushes the value again.
  func collectTombstones(
    in snapshot: [String: PropertyListValue], skipping written: Set<String>, _ state: inout EngineState
  ) {
    guard let lifetime = state.configuration.tombstoneLifetime else { return }
    let now = state.configuration.clock()
    var removed = 0
    for (key, value) in snapshot where !written.contains(key) && state.ledger[key]?.agreed == .deleted {
      guard case .record(let record) = RemoteState(storeValue: value), case .deleted(let date) = record.content,
        now.timeIntervalSince(date) > lifetime, state.mayWrite(.store(key))
      else { continue }
      store.removeValue(forKey: key)
      state.budget.record(key, storeValue: nil)
      removed += 1
      state.debug("collect tombstone \(key) g\(record.generation) (deleted \(date.ISO8601Format()))")
    }
    if removed > 0 { state.storeWritten = true }
  }

  /// Applies an inbound store event to the monitored keys.
  func handle(_ change: ExternalChange, _ state: inout EngineState) {
    let now = state.configuration.clock()
    state.status.lastEvent = SyncStatus.Event(reason: change.reason, date: now, keyCount: change.keys?.count)
    switch change.reason {
    case .quotaViolation:
      state.status.lastQuotaViolation = now
      state.budget.isPrimed = false  // the estimate missed something: measure again
      state.warn("the store reported a quota violation: writes were dropped; see status for sizes")
      return
    case .accountChange:
      state.status.lastAccountChange = now
      state.resetLedger()
      state.warn("the iCloud account changed: history reset, the new account's values win conflicts")
    case .serverChange, .initialSync:
      // A local edit still waiting for its coalesced push meets the remote value here as
      // a conflict, and an inbound event prefers the remote value.
      break
    }
    let monitored = state.monitoredKeys
    // After an account change every monitored key is news, whatever the event names.
    let named = change.reason == .accountChange ? nil : change.keys
    let keys = named.map { monitored.intersection($0) } ?? monitored
    guard !keys.isEmpty else {
      state.debug("\(change.reason) event: no monitored key named, nothing to do")
      return
    }
    state.debug("\(change.reason) event: \(keys.count) monitored key(s)")
    let sorted = keys.sorted()
    let local = domain.values(forKeys: sorted) { key, value in state.ledger[key]?.agrees(with: value) ?? false }
    state.verifyEpoch(local.epoch, of: domain)
    reconcile(sorted, local: local.values, remote: storeValues(sorted), policy: .preferRemote, &state)
  }

  /// Diffs the monitored keys against the ledger, if a `didChangeNotification` said
  /// something changed, and pushes what did.
  func pushPendingLocalEdits(_ state: inout EngineState) {
    let pending = mailbox.withLock { mailbox -> Bool in
      defer { mailbox.localEditsPending = false }
      return mailbox.localEditsPending
    }
    guard pending, !state.monitoredKeys.isEmpty else { return }
    // The notification does not say which key changed: one read of the domain finds out.
    let snapshot = domain.persistentValues(of: state.monitoredKeys)
    state.verifyEpoch(snapshot.epoch, of: domain)
    let local = snapshot.values
    let edited = state.monitoredKeys.filter { key in
      Reconciler.isLocallyChanged(local[key], ledger: state.ledger[key])
    }.sorted()
    guard !edited.isEmpty else { return }
    state.debug("local edit of \(edited.count) monitored key(s)")
    reconcile(edited, local: local, remote: storeValues(edited), policy: .preferLocal, &state)
  }

  private static func describe(_ content: SyncRecord.Content) -> String {
    switch content {
    case .value(let value): value.logDescription
    case .deleted: "deleted"
    }
  }
}

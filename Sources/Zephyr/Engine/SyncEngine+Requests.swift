import Foundation

/// What each request reads before it reconciles: which keys, the local and the store's
/// values, and which side wins a conflict. Every read and write here is made with no
/// lock held; the state is touched only in short `withLock` sections.
extension SyncEngine {
  /// ``sync()``: the whole persistent domain, every key the store and the ledger know;
  /// then old tombstones are collected.
  func syncEverything(_ effects: inout OperationEffects) {
    let local: UserDefaultsDomain.Snapshot
    var remote: [String: PropertyListValue]
    let stamp = KeyPolicy.legacySyncKey
    if domain.persistentName != nil {
      local = callingOut { domain.persistentValues() }
      remote = callingOut { store.allValues() }
      removeLegacyStamp(inDomain: local.values[stamp] != nil || local.unreadable.contains(stamp))
    } else {
      // An unnamed suite's domain cannot be listed: its keys are those Zephyr knows of.
      remote = callingOut { store.allValues() }
      let known = state.withLock { $0.monitoredKeys.union($0.ledger.entries.keys) }
      local = callingOut { domain.persistentValues(of: known.union(remote.keys)) }
      removeLegacyStamp()
    }
    remote[stamp] = nil
    verifyEpoch(local.epoch)
    let candidates = state.withLock { state -> Set<String> in
      for key in local.unreadable.sorted() where KeyPolicy.exclusion(of: key) == nil {
        state.refuse(key, .notPropertyList)
      }
      state.budget.refresh(with: remote)
      return Set(local.values.keys).union(remote.keys).union(state.ledger.entries.keys)
    }
    // Keys left alone last time from these very values were admitted then: they are left
    // out here already (see `reconcile`), so that only the keys to decide are sorted and
    // admitted.
    let unsettled = sharesSuite ? Array(candidates) : unsettled(candidates, local: local.values, remote: remote)
    let keys = state.withLock { $0.admit(unsettled.filter { KeyPolicy.exclusion(of: $0) == nil }.sorted()) }
    let written = reconcile(keys, local: local.values, remote: remote, policy: .preferLocal, &effects)
    state.withLock { [differing = effects.differingFromStore] in $0.metrics.setKeysDifferingFromStore(differing) }
    collectTombstones(in: remote, skipping: written, &effects)
  }

  /// ``sync(keys:)-([String])``: only `keys`, each once.
  func sync(_ keys: [String], _ effects: inout OperationEffects) {
    removeLegacyStamp()
    let admitted = state.withLock { $0.admit(keys) }
    let local = callingOut { domain.persistentValues(of: Set(admitted)) }
    verifyEpoch(local.epoch)
    reconcile(admitted, local: local.values, remote: storeValues(admitted), policy: .preferLocal, &effects)
  }

  /// An inbound store event, applied to the monitored keys it names.
  func handle(_ change: ExternalChange, _ effects: inout OperationEffects) {
    if change.reason == .initialSync {
      forgetDiscardedWrites()
      state.withLock { $0.historyWasReset() }
    }
    if change.reason == .accountChange, sharesSuite {
      // The other account's agreed states are no history here.
      for key in callingOut({ domain.keysWithSharedAgreements() }) { writeLocally(SharedAgreement.key(for: key), nil) }
    }
    let now = self.now()
    let prefixed = candidatesUnderMonitoredPrefixes(for: change)
    let keys = state.withLock { state -> [String] in
      state.status.lastEvent = SyncStatus.Event(reason: change.reason, date: now, keyCount: change.keys?.count)
      state.metrics.countEvent(change.reason)
      effects.measuresDelivery = change.reason == .serverChange && state.configuration.measuresDeliveryDelay
      switch change.reason {
      case .quotaViolation:
        state.status.lastQuotaViolation = now
        state.budget.isPrimed = false  // the estimate missed something: measure again
        state.warn("the store reported a quota violation: writes were dropped; see status for sizes")
        return []
      case .accountChange:
        state.status.lastAccountChange = now
        state.resetLedger()
        state.historyWasReset()
        state.warn("the iCloud account changed: history reset, the new account's values win conflicts")
      case .serverChange, .initialSync:
        // A local edit still waiting for its coalesced push meets the remote value here as
        // a conflict, and an inbound event prefers the remote value.
        break
      }
      // After an account change or the initial download every monitored key is news,
      // whatever the event names.
      let named = change.reason == .serverChange ? change.keys : nil
      var keys = named.map { state.monitoredKeys.intersection($0) } ?? state.monitoredKeys
      keys.formUnion(state.admit(prefixed.filter(state.isUnderMonitoredPrefix).sorted()))
      if keys.isEmpty {
        state.debug("\(change.reason) event: no monitored key named, nothing to do")
      } else {
        state.debug("\(change.reason) event: \(keys.count) monitored key(s)")
      }
      return keys.sorted()
    }
    // Whatever it names, the event follows the store's initial download: done once its
    // values are written.
    defer { initialDownloadHappened(change.reason) }
    guard !keys.isEmpty else { return }
    let agreed = ledgerEntries(of: keys)
    // A strategy key's local value is taken to be the one its ledger agreed on, and read
    // once, just before the batch writes (see `reconcile`), rather than also before it.
    let presumed = sharesSuite ? [:] : agreedLocalValues(of: keys)
    let unknown = keys.filter { presumed[$0] == nil }
    let local = callingOut {
      domain.values(forKeys: unknown) { key, value in agreed[key]?.agrees(with: value) ?? false }
    }
    verifyEpoch(local.epoch)
    reconcile(
      keys, local: local.values.merging(presumed) { read, _ in read }, remote: storeValues(keys),
      policy: .preferRemote, presumed: Set(presumed.keys), &effects)
  }

  /// The local values that the ledger says `keys` hold, for strategy keys whose agreed
  /// state gives back exactly the value agreed on (its fingerprint): no pull pending, no
  /// typed write waiting for its push. The values are computed with no lock held.
  func agreedLocalValues(of keys: [String]) -> [String: PropertyListValue] {
    let states = state.withLock { state in
      keys.compactMap { key -> (String, LedgerEntry, ReplicaState, MergeStrategy)? in
        guard let entry = state.ledger[key], entry.pendingPull == nil, let replica = entry.state,
          state.lane.typedWrites[key] == nil
        else { return nil }
        return (key, entry, replica, state.strategy(of: key))
      }
    }
    var values: [String: PropertyListValue] = [:]
    for (key, entry, replica, strategy) in states {
      // `resolving: false`: a custom strategy's rule is user code, not run here; when the
      // latest sibling is not the agreed value, the fingerprint says so.
      guard let value = replica.value(strategy: strategy, key: key, resolving: false), entry.agrees(with: value)
      else { continue }
      values[key] = value
    }
    return values
  }

  /// Pushes local edits: the typed writes made since the last push, and, when a
  /// `didChangeNotification` said something else changed, the monitored keys' edits
  /// found by diffing them against the ledger. One batch either way.
  func pushLocalEdits(_ effects: inout OperationEffects) {
    let (pending, monitored, prefixed, typed) = state.withLock { state in
      defer {
        state.lane.localEditsPending = false
        state.lane.flushScheduled = false
        state.lane.typedWrites = [:]
      }
      return (
        state.lane.localEditsPending, state.monitoredKeys, !state.monitoredPrefixes.isEmpty, state.lane.typedWrites
      )
    }
    let typedKeys = typed.isEmpty ? [] : state.withLock { $0.admit(typed.keys.sorted()) }
    if pending, !monitored.isEmpty || prefixed || !typedKeys.isEmpty {
      pushDiffedEdits(of: monitored, listingPrefixes: prefixed, with: typedKeys, &effects)
    } else if !typedKeys.isEmpty {
      pushTypedWrites(typedKeys, typed, &effects)
    }
    if !typed.isEmpty {
      // Their first-use reconciles, if any, are done: a first read waiting for one goes on.
      state.withLock { $0.lane.firstUseReconciles.subtract(typed.keys) }
      signalKeyWrites()
    }
  }

  /// The notification does not say which key changed: one read of the domain finds out.
  /// While a prefix is monitored the read lists the whole domain, to find the keys under
  /// it (an unnamed suite, which cannot be listed, offers those the ledger knows).
  private func pushDiffedEdits(
    of explicit: Set<String>, listingPrefixes: Bool, with typedKeys: [String], _ effects: inout OperationEffects
  ) {
    let agreedUnderPrefixes = listingPrefixes ? state.withLock { $0.ledgerKeysUnderMonitoredPrefixes() } : []
    let listed = listingPrefixes && domain.persistentName != nil
    let snapshot = callingOut {
      domain.persistentValues(of: listed ? nil : explicit.union(typedKeys).union(agreedUnderPrefixes))
    }
    verifyEpoch(snapshot.epoch)
    let monitored =
      listingPrefixes
      ? explicit.union(admitUnderMonitoredPrefixes(Set(snapshot.values.keys).union(agreedUnderPrefixes))) : explicit
    let agreed = ledgerEntries(of: monitored)
    let edited = monitored.filter { Reconciler.isLocallyChanged(snapshot.values[$0], ledger: agreed[$0]) }
    let keys = Set(edited).union(typedKeys).sorted()
    guard !keys.isEmpty else { return }
    state.withLock { state in
      let typed = typedKeys.isEmpty ? "" : ", and \(typedKeys.count) typed write(s)"
      state.debug("local edit of \(edited.count) monitored key(s)\(typed)")
    }
    reconcile(keys, local: snapshot.values, remote: storeValues(keys), policy: .preferLocal, &effects)
  }

  /// Typed writes know their keys and values: pushed without reading the domain (on
  /// Linux the first read after a write costs the whole domain), O(1) in the number of
  /// synced keys. A key Zephyr wrote itself since its typed write is read again, and so
  /// is a typed key's first use (a read or a stream), which reconciles it as
  /// `sync(keys:)` would: only those keys are read.
  private func pushTypedWrites(_ keys: [String], _ typed: [String: TypedWrite], _ effects: inout OperationEffects) {
    var local: [String: PropertyListValue] = [:]
    var reread: [String] = []
    for key in keys {
      switch typed[key] {
      case .written(let value)?: local[key] = value
      case .reread?, nil: reread.append(key)
      }
    }
    if !reread.isEmpty {
      let agreed = ledgerEntries(of: reread)
      let current = callingOut {
        domain.values(forKeys: reread) { key, value in agreed[key]?.agrees(with: value) ?? false }
      }
      // A domain reset while running: pull, rather than push the keys it lost as deletes.
      verifyEpoch(current.epoch)
      local.merge(current.values) { _, current in current }
    }
    let remote = storeValues(keys)
    state.withLock { state in
      let written = keys.count - reread.count
      let writes = written > 0 ? ["typed write of \(written) key(s)"] : []
      let rereads =
        reread.isEmpty ? [] : ["\(reread.count) typed key(s) read again (a first use, or a pull since the set)"]
      state.debug((writes + rereads).joined(separator: "; "))
      // A typed set is a deliberate edit made now. On a device with no history of the
      // key it edits the store's record, rather than lose to it as a never-synced
      // device's write would (a write made before the initial download is still
      // discarded by the store, and the cloud's value wins then).
      // (A strategy key's set on such a device adds to the store's state instead: it has
      // seen no removal. Made after an initial download or an account change, it is
      // not a write from before them, which the store's state replaces.)
      state.markReconciled(keys.filter { if case .written = typed[$0] { true } else { false } })
      for key in keys where state.ledger[key] == nil && state.strategy(of: key).isLastWriterWins {
        guard case .written = typed[key], case .record(let record) = RemoteState(storeValue: remote[key]) else {
          continue
        }
        state.setLedger(key, LedgerEntry(agreeingWith: record))
      }
    }
    reconcile(keys, local: local, remote: remote, policy: .preferLocal, &effects)
  }

  /// Settles the pulls a crash left written ahead but maybe not applied, at launch, before
  /// the app can edit: whether each `UserDefaults` write happened is read off the local
  /// value now, while it is still either the value from before the pull or the pulled one.
  func settlePendingPulls() {
    let pending = state.withLock { state in state.ledger.entries.filter { $0.value.pendingPull != nil }.map(\.key) }
    guard !pending.isEmpty else { return }
    let local = callingOut { domain.persistentValues(of: Set(pending)).values }
    state.withLock { state in
      for key in pending {
        state.setLedger(key, state.ledger[key]?.resolved(local: local[key]))
      }
      state.debug("settled \(pending.count) pull(s) interrupted before the last exit")
    }
  }

  /// The initial download (a new install, or a new account) discarded what was written
  /// on this device before it, by this process or another one on a shared suite: those
  /// writes are no history. Every agreed state (in the ledger, and in a shared suite) is
  /// forgotten unless the store now holds that writer's record at or below its
  /// generation (the write survived, or a crash left the ledger ahead and the rules
  /// republish it). So the cloud's value wins over blind writes whatever the device ids
  /// ("cloud history beats a never-synced device"), and a key the cloud never had is
  /// uploaded again.
  func forgetDiscardedWrites() {
    if sharesSuite {
      let sharedKeys = callingOut { domain.keysWithSharedAgreements() }
      let agreed = callingOut { domain.sharedAgreements(of: sharedKeys) }
      let held = storeValues(sharedKeys)
      for (key, entry) in agreed.sorted(by: { $0.key < $1.key }) where !Self.storeHolds(entry, held[key]) {
        writeLocally(SharedAgreement.key(for: key), nil)
      }
    }
    let entries = state.withLock { $0.ledger.entries }
    guard !entries.isEmpty else { return }
    let held = storeValues(entries.keys)
    state.withLock { state in
      var forgotten = 0
      for (key, entry) in entries where !Self.storeHolds(entry, held[key]) && state.ledger[key] == entry {
        state.setLedger(key, nil)
        forgotten += 1
      }
      state.debug(
        "initial download: \(forgotten) agreed state(s) the store does not hold forgotten; the cloud's values win")
    }
  }

  /// Whether the store's value is `entry`'s writer's record at or below its generation.
  private static func storeHolds(_ entry: LedgerEntry, _ storeValue: PropertyListValue?) -> Bool {
    guard let stamp = RemoteState(storeValue: storeValue).stamp else { return false }
    return stamp.origin == entry.origin && stamp.generation <= entry.generation
  }

  // MARK: Helpers

  /// Clears the history when the domain no longer carries this ledger's epoch (`epoch`,
  /// read with the operation's local values): the app reset or replaced its defaults
  /// while running. Like a new install, it then pulls from the store instead of pushing
  /// a delete for every key it lost.
  func verifyEpoch(_ epoch: String?) {
    let fresh = state.withLock { state -> String? in
      guard epoch != state.ledger.epoch else { return nil }
      // Another process on this suite (an app and its extension) saw the reset first and
      // wrote the new epoch: take it, rather than write yet another that it would take
      // for one more reset.
      if let epoch, !epoch.isEmpty {
        state.replaceLedger(epoch: epoch)
        return nil
      }
      let fresh = EngineState.randomID(length: 12)
      state.replaceLedger(epoch: fresh)
      return fresh
    }
    if let fresh { writeBookkeeping(fresh, forKey: EngineState.ledgerIDKey) }
  }

  /// Zephyr 4 kept one timestamp for the whole store under `ZephyrSyncKey`; it is never
  /// synced and is removed wherever it is found. `inDomain`: whether a snapshot of the
  /// persistent domain, read anyway, shows it (`nil`: read the key, which on Linux costs a
  /// copy of the whole domain).
  func removeLegacyStamp(inDomain: Bool? = nil) {
    let key = KeyPolicy.legacySyncKey
    if callingOut({ store.value(forKey: key) }) != nil, mayWrite(.store(key)) {
      callingOut { store.removeValue(forKey: key) }
      state.withLock { $0.debug("removed Zephyr 4's \(key) from the store") }
    }
    if inDomain ?? callingOut({ domain.containsAnyValue(forKey: key) }) {
      writeLocally(key, nil)
    }
  }

  /// Removes tombstones older than the configured lifetime from the store, giving their
  /// keys back. The ledger keeps the delete, so this device never pushes the value again.
  ///
  /// Candidates are the expired tombstones of `snapshot` (the store as the batch read it)
  /// that the ledger agrees on. Each is read again right before it is removed, and removed
  /// only when the store still holds that very tombstone: a value another device wrote
  /// since the snapshot is never deleted. (The store offers no compare-and-swap; the
  /// window left is the one between that read and the removal.)
  func collectTombstones(
    in snapshot: [String: PropertyListValue], skipping written: Set<String>, _ effects: inout OperationEffects
  ) {
    let now = self.now()
    let candidates = state.withLock { state -> [(key: String, stamp: Stamp)] in
      guard let lifetime = state.configuration.tombstoneLifetime else { return [] }
      return snapshot.compactMap { key, value in
        guard !written.contains(key), let entry = state.ledger[key], entry.agreed == .deleted,
          entry.state?.isDeleted ?? true,
          let (stamp, _) = Self.expiredTombstone(value, lifetime: lifetime, now: now), stamp == entry.stamp
        else { return nil }
        return (key, stamp)
      }.sorted { $0.key < $1.key }
    }
    for (key, stamp) in candidates {
      guard let lifetime = state.withLock({ $0.configuration.tombstoneLifetime }),
        let value = callingOut({ store.value(forKey: key) }),
        let (held, date) = Self.expiredTombstone(value, lifetime: lifetime, now: now), held == stamp,
        mayWrite(.store(key))
      else { continue }
      callingOut { store.removeValue(forKey: key) }
      effects.storeWritten = true
      state.withLock { state in
        state.budget.record(key, storeValue: nil)
        state.debug("collect tombstone \(key) g\(stamp.generation) (deleted \(date.ISO8601Format()))")
      }
    }
  }

  /// The stamp and date of `value` when it is a tombstone older than `lifetime`: a
  /// last-writer-wins tombstone, or the record of a strategy key's deleted state (its
  /// merge state holds nothing; the ledger keeps what it had seen, so this device never
  /// brings a removed element back).
  private static func expiredTombstone(
    _ value: PropertyListValue, lifetime: TimeInterval, now: Date
  ) -> (Stamp, Date)? {
    switch RemoteState(storeValue: value) {
    case .record(let record):
      guard case .deleted(let date) = record.content, now.timeIntervalSince(date) > lifetime else { return nil }
      return (record.stamp, date)
    case .replica(let record):
      guard record.state.isDeleted, let date = record.deleted, now.timeIntervalSince(date) > lifetime else {
        return nil
      }
      return (record.stamp, date)
    default:
      return nil
    }
  }

  func storeValues(_ keys: some Sequence<String>) -> [String: PropertyListValue] {
    callingOut {
      var values: [String: PropertyListValue] = [:]
      for key in keys {
        if let value = store.value(forKey: key) { values[key] = value }
      }
      return values
    }
  }

  func ledgerEntries(of keys: some Sequence<String>) -> [String: LedgerEntry] {
    state.withLock { state in
      var entries: [String: LedgerEntry] = [:]
      for key in keys { entries[key] = state.ledger[key] }
      return entries
    }
  }
}

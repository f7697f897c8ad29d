import Foundation

/// The merge rules of <doc:MergeSemantics>, as one pure function per key.
///
/// Read top to bottom, this is the rules table: it looks only at the local value, the
/// store's state, the ledger's agreed state and the policy, and returns a ``SyncAction``.
/// All I/O happens elsewhere.
enum Reconciler {
  /// A key's action, and the problem with the store's value to report, if any.
  struct Decision: Sendable, Equatable {
    var action: SyncAction
    /// Why the store's value was not usable (then treated as absent, or left alone).
    var problem: RefusalReason?
  }

  /// Decides one key from the raw store value: classifies it (a record, foreign, broken,
  /// of a newer format, or with a generation too far above the agreed one to be
  /// believed), then applies the rules: ``StrategyReconciler`` for a key merged by a
  /// strategy (the store's record says so, or the ledger's cached state, or the
  /// declaration), the last-writer-wins rules below for the others.
  ///
  /// `ownOrigin` is this device's id when its ledger may be older than what it wrote (the
  /// ledger could not be saved, or its file was missing or damaged at launch while the
  /// domain was the same copy): a record this device wrote, newer than the ledger's
  /// entry, is then taken as the agreed state, so an edit made since is pushed instead of
  /// losing to the device's own older write. (Only with a local value: a missing one is
  /// never pushed as a delete without history.)
  ///
  /// `clock` is the device's Lamport clock: the highest generation it has written or read
  /// on any key. A push is numbered above it.
  static func decide(
    key: String, local: PropertyListValue?, storeValue: PropertyListValue?, ledger: LedgerEntry?,
    policy: MismatchPolicy, resolver: ConflictResolver? = nil, ownOrigin: String? = nil, clock: UInt64 = 0,
    strategy: MergeStrategy = .lastWriterWins, deviceID: String = "", replicaID: String? = nil,
    takingStore: Bool = false
  ) -> Decision {
    var remote = RemoteState(storeValue: storeValue)
    let agreed = max(ledger?.generation ?? 0, clock)
    // (A state's context may claim writes far above its own stamp: it is checked too,
    // or a forged one would pin this device's clock.)
    let claimed = max(remote.stamp?.generation ?? 0, remote.replicaContextMaximum)
    if claimed > 0, let reason = Generation.implausibility(of: claimed, agreed: agreed) {
      remote = .malformed(reason: reason)
    }
    let problem: RefusalReason? =
      switch remote {
      case .malformed(let reason): .malformedRecord(reason)
      case .unsupported(let version): .unsupportedFormat(version)
      case .absent, .record, .replica, .foreign: nil
      }
    if let kind = remote.replicaKind ?? ledger?.state?.kind ?? ReplicaKind(strategy, value: local) {
      var decision = StrategyReconciler.decide(
        StrategyReconciler.Input(
          key: key, local: local, remote: remote, ledger: ledger, declared: strategy, kind: kind,
          replicaID: replicaID ?? deviceID, deviceID: deviceID, clock: clock, takingStore: takingStore))
      decision.problem = decision.problem ?? problem
      return decision
    }
    var ledger = ledger
    if let ownOrigin, case .record(let record) = remote, record.origin == ownOrigin, local != nil,
      ledger.map({ record.stamp > $0.stamp }) ?? true
    {
      let regained = LedgerEntry(stamp: record.stamp, agreed: LedgerEntry.Agreed(record.content))
      if regained.agrees(with: local) { return Decision(action: .adopt(stamp: record.stamp)) }
      ledger = regained
    }
    let action = decide(
      key: key, local: local, remote: remote, ledger: ledger, policy: policy, resolver: resolver, clock: clock)
    return Decision(action: action, problem: problem)
  }

  static func decide(
    key: String,
    local: PropertyListValue?,
    remote: RemoteState,
    ledger: LedgerEntry?,
    policy: MismatchPolicy,
    resolver: ConflictResolver? = nil,
    clock: UInt64 = 0
  ) -> SyncAction {
    let record: SyncRecord?
    switch remote {
    case .unsupported(let version):
      return .skip(reason: "store holds record format \(version), newer than this Zephyr")
    case .absent, .malformed:
      record = nil
    case .record(let stored):
      record = stored
    case .foreign(let value):
      record = foreignRecord(value, ledger: ledger)
    case .replica:
      // Routed to the strategy rules before this point.
      return .skip(reason: "a strategy key's record reached the last-writer-wins rules")
    }

    let agreedGeneration = ledger?.generation ?? 0
    // Lamport: this device's next write is numbered above everything it wrote or read.
    let floor = max(agreedGeneration, clock, record?.generation ?? 0)
    // A key with no history counts as changed when present.
    let localChanged = isLocallyChanged(local, ledger: ledger)

    guard let record else {
      // Absence tells nothing: never a delete.
      if localChanged {
        let reason: SyncAction.Reason = ledger == nil ? .firstUpload : .localEdit
        return .push(generation: Generation.next(after: floor), value: local, reason: reason)
      }
      if let ledger, local != nil {
        return .republish(stamp: ledger.stamp, value: local, reason: .absentFromStore)
      }
      return .none
    }

    let sameState = LedgerEntry.Agreed(local) == LedgerEntry.Agreed(record.content)
    guard let ledger else {
      if local == nil { return .pull(stamp: record.stamp, content: record.content, reason: .remoteNewer) }
      if sameState { return .adopt(stamp: record.stamp) }
      if remote.isForeign {
        // A foreign value meets a never-synced local value: a plain conflict.
        return resolveConflict(
          key: key, local: local, record: record, policy: policy, resolver: resolver, floor: floor)
      }
      return .pull(stamp: record.stamp, content: record.content, reason: .cloudHistory)
    }

    // The remote state changed when it differs from the agreed one and its write comes
    // later in the order of writes. The agreed state itself under another stamp is no
    // change; an earlier write with other content means the store's last-writer-wins
    // dropped the agreed state, which is published again.
    //
    // An agreed foreign value (empty origin) has no place in that order: each device read
    // it at a generation of its own, one above its own history. Any Zephyr record with
    // other content is then news, never a lost write to publish again over it.
    let remoteChanged: Bool
    if ledger.agrees(with: record.content) {
      remoteChanged = false
    } else if (ledger.origin.isEmpty && !record.origin.isEmpty) || record.stamp > ledger.stamp
      || (record.stamp == ledger.stamp
        && LedgerEntry.Agreed(record.content).rawFingerprint > ledger.agreed.rawFingerprint)
    {
      remoteChanged = true
    } else if localChanged {
      return .push(generation: Generation.next(after: floor), value: local, reason: .localEdit)
    } else {
      return .republish(stamp: ledger.stamp, value: local, reason: .storeLostWrite)
    }

    switch (localChanged, remoteChanged) {
    case (false, false):
      return record.stamp > ledger.stamp ? .adopt(stamp: record.stamp) : .none
    case (true, false):
      return .push(generation: Generation.next(after: floor), value: local, reason: .localEdit)
    case (false, true):
      let reason: SyncAction.Reason =
        remote.isForeign ? .foreignWrite : record.generation == ledger.generation ? .remoteDiffers : .remoteNewer
      return .pull(stamp: record.stamp, content: record.content, reason: reason)
    case (true, true):
      if sameState { return .adopt(stamp: record.stamp) }
      return resolveConflict(
        key: key, local: local, record: record, policy: policy, resolver: resolver, floor: floor)
    }
  }

  /// Whether the local state differs from the agreed one; with no history, whether the
  /// key is present.
  static func isLocallyChanged(_ local: PropertyListValue?, ledger: LedgerEntry?) -> Bool {
    ledger.map { !$0.agrees(with: local) } ?? (local != nil)
  }

  /// A foreign value read as a record with the empty origin: at the agreed stamp when it
  /// is the agreed value, one generation above the ledger when it differs, at generation
  /// 1 with no history. (Not 0: at 1 a later republish of the foreign value cannot tie
  /// with the first edit made on top of it.)
  static func foreignRecord(_ value: PropertyListValue, ledger: LedgerEntry?) -> SyncRecord {
    guard let ledger else { return SyncRecord(generation: 1, origin: "", content: .value(value)) }
    if ledger.agrees(with: value) {
      return SyncRecord(generation: ledger.generation, origin: ledger.origin, content: .value(value))
    }
    return SyncRecord(generation: Generation.next(after: ledger.generation), origin: "", content: .value(value))
  }

  private static func resolveConflict(
    key: String, local: PropertyListValue?, record: SyncRecord, policy: MismatchPolicy, resolver: ConflictResolver?,
    floor: UInt64
  ) -> SyncAction {
    let next = Generation.next(after: floor)
    let remoteValue = record.content.value
    if resolver != nil { LockAudit.assertNoLockHeld(calling: "the conflict resolver") }
    switch resolver?(Conflict(key: key, local: local, remote: remoteValue)) ?? .usePolicy {
    case .keepLocal,
      .usePolicy where policy == .preferLocal:
      return .push(generation: next, value: local, reason: .conflictLocalWins)
    case .keepRemote, .usePolicy:
      return .pull(stamp: record.stamp, content: record.content, reason: .conflictRemoteWins)
    case .merged(let value):
      return .push(generation: next, value: value, reason: .resolverMerged)
    }
  }

}

extension RemoteState {
  var isForeign: Bool {
    if case .foreign = self { return true }
    return false
  }

  /// The stamp of a record's write; `nil` for other values.
  var stamp: Stamp? {
    switch self {
    case .record(let record): record.stamp
    case .replica(let record): record.stamp
    case .absent, .foreign, .malformed, .unsupported: nil
    }
  }

  /// The highest generation a state record's context claims; 0 for other values.
  var replicaContextMaximum: UInt64 {
    if case .replica(let record) = self { record.state.context.maximum } else { 0 }
  }

  /// The strategy a record of the state format names.
  var replicaKind: ReplicaKind? {
    if case .replica(let record) = self { record.state.kind } else { nil }
  }
}

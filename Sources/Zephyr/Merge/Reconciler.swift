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

  /// One key as the batch read it.
  struct Input: Sendable {
    var key: String
    var local: PropertyListValue?
    /// The store's raw value.
    var storeValue: PropertyListValue?
    var ledger: LedgerEntry?
    /// The strategy the device declares for the key (a typed key's, or the configuration's).
    var strategy: MergeStrategy = .lastWriterWins
    /// The most elements a `.set` keeps (``SyncConfiguration/setCapacities``); `nil` for no limit.
    var capacity: Int?
    /// Set after an account change or the initial download, until the key is reconciled once.
    var takingStore = false
  }

  /// What holds for every key of a batch, read with the ledger in one locked read.
  struct Context: Sendable {
    var policy: MismatchPolicy
    var resolver: ConflictResolver?
    /// This device's id when its ledger may be older than what it wrote (the ledger could
    /// not be saved, or its file was missing or damaged at launch while the domain was the
    /// same copy): a record this device wrote, newer than the ledger's entry, is then taken
    /// as the agreed state, so an edit made since is pushed instead of losing to the
    /// device's own older write. (Only with a local value: a missing one is never pushed
    /// as a delete without history.)
    var ownOrigin: String?
    /// The device's Lamport clock: the highest generation it has written or read on any
    /// key. A push is numbered above it.
    var clock: UInt64 = 0
    /// The device id a pushed record is stamped with.
    var deviceID = ""
    /// The id this process numbers its writes of strategy keys under; the device id when `nil`.
    var replicaID: String?
  }

  /// Decides one key from the raw store value: classifies it (a record, foreign, broken,
  /// of a newer format, or with a generation too far above the agreed one to be
  /// believed), then applies the rules: ``StrategyReconciler`` for a key merged by a
  /// strategy (the store's record says so, or the ledger's cached state, or the
  /// declaration), the last-writer-wins table (`decide(_:_:)` taking ``Facts``) for the others.
  static func decide(_ input: Input, _ context: Context) -> Decision {
    let remote = classify(input.storeValue, ledger: input.ledger, clock: context.clock)
    let problem: RefusalReason? =
      switch remote {
      case .malformed(let reason): .malformedRecord(reason)
      case .unreadableCompressed(let reason): .unreadableCompressedRecord(reason)
      case .unsupported(let version): .unsupportedFormat(version)
      case .absent, .record, .replica, .foreign: nil
      }
    let declared = ReplicaKind(input.strategy, value: input.local)
    if let kind = remote.replicaKind ?? input.ledger?.state?.kind ?? declared {
      var decision = StrategyReconciler.decide(
        StrategyReconciler.Input(
          key: input.key, local: input.local, remote: remote, ledger: input.ledger, declared: input.strategy,
          kind: kind, capacity: input.capacity, replicaID: context.replicaID ?? context.deviceID,
          deviceID: context.deviceID,
          clock: context.clock, takingStore: input.takingStore))
      decision.problem = decision.problem ?? problem
      return decision
    }
    let facts = Facts(key: input.key, local: input.local, remote: remote, ledger: input.ledger, context: context)
    return Decision(action: decide(facts, context), problem: problem)
  }

  /// The store's value classified; a record whose generation (or whose state's context)
  /// is too far above the agreed one to be believed is malformed.
  static func classify(_ storeValue: PropertyListValue?, ledger: LedgerEntry?, clock: UInt64) -> RemoteState {
    let remote = RemoteState(storeValue: storeValue)
    let agreed = max(ledger?.generation ?? 0, clock)
    // (A state's context may claim writes far above its own stamp: it is checked too,
    // or a forged one would pin this device's clock.)
    let claimed = max(remote.stamp?.generation ?? 0, remote.replicaContextMaximum)
    if claimed > 0, let reason = Generation.implausibility(of: claimed, agreed: agreed) {
      return .malformed(reason: reason)
    }
    return remote
  }

  /// The last-writer-wins rules: one row per rule, in the order of the table in
  /// <doc:MergeSemantics> (the first row that matches decides).
  static func decide(_ facts: Facts, _ context: Context) -> SyncAction {
    let next = Generation.next(after: facts.floor)
    switch (facts.remote, facts.history) {
    case (.record(let record), _) where facts.regainedOwnWrite:
      return .adopt(stamp: record.stamp, over: facts.names(taking: record))
    case (.newerFormat(let version), _):
      return .skip(reason: "store holds record format \(version), newer than this Zephyr")
    case (.strategyRecord, _):
      // Routed to the strategy rules before this point.
      return .skip(reason: "a strategy key's record reached the last-writer-wins rules")
    case (.absent, let history) where facts.localChanged:
      return .push(
        generation: next, value: facts.local, reason: history == nil ? .firstUpload : .localEdit,
        over: facts.names(pushing: facts.local))
    case (.absent, let history?) where facts.local != nil:
      return .republish(
        stamp: history.stamp, value: facts.local, reason: .absentFromStore, over: history.foreignAncestors)
    case (.absent, _):
      return .none
    case (.record(let record), nil) where facts.local == nil:
      return .pull(
        stamp: record.stamp, content: record.content, reason: .remoteNewer, over: facts.names(taking: record))
    case (.record(let record), nil) where facts.sameState:
      return .adopt(stamp: record.stamp, over: facts.names(taking: record))
    case (.record(let record), nil) where facts.isForeign:
      return resolveConflict(facts, record: record, context)
    case (.record(let record), nil):
      return .pull(
        stamp: record.stamp, content: record.content, reason: .cloudHistory, over: facts.names(taking: record))
    case (.record, _?) where facts.lostWrite && facts.localChanged:
      return .push(generation: next, value: facts.local, reason: .localEdit, over: facts.names(pushing: facts.local))
    case (.record, let history?) where facts.lostWrite:
      return .republish(
        stamp: history.stamp, value: facts.local, reason: .storeLostWrite, over: history.foreignAncestors)
    case (.record(let record), let history?) where !facts.localChanged && !facts.remoteChanged:
      return record.stamp > history.stamp ? .adopt(stamp: record.stamp, over: facts.names(taking: record)) : .none
    case (.record, _?) where !facts.remoteChanged:
      return .push(generation: next, value: facts.local, reason: .localEdit, over: facts.names(pushing: facts.local))
    case (.record(let record), let history?) where !facts.localChanged:
      let reason: SyncAction.Reason =
        facts.isForeign ? .foreignWrite : record.generation == history.generation ? .remoteDiffers : .remoteNewer
      return .pull(stamp: record.stamp, content: record.content, reason: reason, over: facts.names(taking: record))
    case (.record(let record), _?) where facts.sameState:
      return .adopt(stamp: record.stamp, over: facts.names(taking: record))
    case (.record(let record), _?):
      return resolveConflict(facts, record: record, context)
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

  /// Both sides changed, to different states: the resolver decides, else the policy.
  private static func resolveConflict(_ facts: Facts, record: SyncRecord, _ context: Context) -> SyncAction {
    let next = Generation.next(after: facts.floor)
    let remoteValue = record.content.value
    let resolver = context.resolver
    if resolver != nil { LockAudit.assertNoLockHeld(calling: "the conflict resolver") }
    switch resolver?(Conflict(key: facts.key, local: facts.local, remote: remoteValue)) ?? .usePolicy {
    case .keepLocal,
      .usePolicy where context.policy == .preferLocal:
      return .push(
        generation: next, value: facts.local, reason: .conflictLocalWins, over: facts.names(pushing: facts.local))
    case .keepRemote, .usePolicy:
      return .pull(
        stamp: record.stamp, content: record.content, reason: .conflictRemoteWins, over: facts.names(taking: record))
    case .merged(let value):
      return .push(generation: next, value: value, reason: .resolverMerged, over: facts.names(pushing: value))
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
    case .absent, .foreign, .malformed, .unreadableCompressed, .unsupported: nil
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

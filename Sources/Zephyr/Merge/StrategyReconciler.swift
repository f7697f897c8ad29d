import Foundation

/// What a merge of a strategy key does: the state the device now holds, and the writes
/// that bring the store and `UserDefaults` to it.
struct StrategyMerge: Sendable, Equatable {
  /// The joined state: cached in the ledger, and the store's record when ``push`` is set.
  var state: ReplicaState
  /// The stamp of the record to write, when the store lacks something of ``state``.
  var push: Stamp?
  /// The value to write to `UserDefaults` (`.some(nil)`: remove it), when the local value
  /// is not the state's.
  var local: PropertyListValue??
  /// The ledger entry's stamp: the pushed record's, else the store's record's.
  var agreed: Stamp
  /// The state's value, for the decision log.
  var value: PropertyListValue?
  var reason: SyncAction.Reason
}

/// The merge rule of every key merged by a strategy, as one pure function: the device's
/// state (its cached state, with the local edit applied) joined with the store's.
///
/// | this device | the store | action |
/// |---|---|---|
/// | unchanged, the store's state includes it | any | take the store's state: write the value locally if it differs |
/// | edited, or holding writes the store lacks | any | push the join (and write it locally when the store added something) |
/// | no history of the key | a state | join: the device's value adds to the store's, removes nothing |
/// | after an account change or initial download, no history | a state | take the store's state (the cloud wins over writes made before it) |
///
/// There is no conflict and no policy: the join keeps both sides' additions and every
/// removal made by a device that saw what it removed, whichever device merges.
enum StrategyReconciler {
  /// What the rule looks at.
  struct Input {
    var key: String
    var local: PropertyListValue?
    /// The store's value, classified.
    var remote: RemoteState
    var ledger: LedgerEntry?
    /// The strategy the device declares for the key (a typed key's, or the configuration's).
    var declared: MergeStrategy
    /// How the key merges: the store record's tag, else the ledger's state, else the declaration.
    var kind: ReplicaKind
    /// The most elements a `.set` keeps (see ``ReplicaState/trimmed(toCapacity:)``).
    var capacity: Int?
    /// The id this process numbers its writes under (see ``EngineState/replicaID``).
    var replicaID: String
    /// The device id a pushed record is stamped with.
    var deviceID: String
    /// The device's Lamport clock.
    var clock: UInt64
    /// Set after an account change or the initial download, until the key is reconciled once.
    var takingStore: Bool
  }

  static func decide(_ input: Input) -> Reconciler.Decision {
    let kind = input.kind
    if let refusal = refusal(input) { return refusal }
    let (remote, remoteStamp, upgrading) = storeState(of: input.remote, kind: kind)
    if case .unsupported(let version) = input.remote {
      return Reconciler.Decision(action: .skip(reason: "store holds record format \(version), newer than this Zephyr"))
    }
    let base = cachedState(input.ledger, kind: kind)
    let floor =
      [
        input.clock, input.ledger?.generation ?? 0, remoteStamp?.generation ?? 0, remote?.context.maximum ?? 0,
        base?.context.maximum ?? 0,
      ].max() ?? 0
    let generation = Generation.next(after: floor)

    if input.takingStore, input.ledger == nil, let remote {
      let taken = trimmed(remote, input)
      return decision(
        input, state: taken, push: taken == remote ? nil : Stamp(generation: generation, origin: input.deviceID),
        agreed: remoteStamp, reason: taken == remote ? .cloudHistory : .trimmedToCapacity)
    }
    var merging = input
    if !kind.canMerge(input.local) { merging.local = nil }
    let (mine, edited) = deviceState(
      merging, base: base, remote: remote, dot: Stamp(generation: generation, origin: input.replicaID))
    let untrimmed = remote.map { mine.joined(with: $0) } ?? mine
    let joined = trimmed(untrimmed, input)
    let stamp = Stamp(generation: generation, origin: input.deviceID)
    let reason: SyncAction.Reason
    switch remote {
    case nil:
      // Nothing to keep (never written), or a deleted state the store collected after the
      // tombstone lifetime and this device has nothing new for: absence is no news then.
      guard !joined.context.isEmpty, edited || !joined.isDeleted else { return Reconciler.Decision(action: .none) }
      reason = !edited ? .absentFromStore : input.ledger == nil ? .firstUpload : .localEdit
    case let remote? where joined == remote:
      // (The store's state itself: its record's fields are the ledger's too.)
      return decision(
        input, state: remote, push: upgrading ? stamp : nil, agreed: remoteStamp,
        reason: upgrading ? .upgradedRecord : .remoteNewer)
    case _ where joined != untrimmed:
      reason = .trimmedToCapacity
    case let remote?:
      reason =
        joined == mine
        ? (edited ? .localEdit : .storeLostWrite)
        : remote.includes(base ?? ReplicaState(kind: kind)) && !edited
          ? .remoteNewer : .mergedByStrategy
    }
    return decision(input, state: joined, push: stamp, agreed: remoteStamp, reason: reason)
  }

  /// A key the strategy cannot merge, locally or in the store: left alone, and reported.
  private static func refusal(_ input: Input) -> Reconciler.Decision? {
    let kind = input.kind
    // A local value the ledger agreed on is a value a state of this kind showed: it
    // merges, and is not decoded again to find out (25,000 packed ids, say).
    let agreedOn = input.ledger.map { $0.state?.kind == kind && $0.agrees(with: input.local) } ?? false
    // A value it cannot merge that is no edit (a foreign value pulled before the key
    // merged by a strategy here) is replaced by the store's state, as nothing.
    guard agreedOn || kind.canMerge(input.local) || !holdsEdit(input) else {
      return Reconciler.Decision(
        action: .skip(reason: "a \(kind.rawValue) strategy cannot merge a \(input.local?.kindName ?? "value")"),
        problem: .strategyCannotMerge(strategy: kind.rawValue, value: input.local?.kindName ?? "value"))
    }
    if case .foreign(let value) = input.remote, !kind.canMerge(value), !holdsEdit(input) {
      // (A plain array under a packed set, say: not taken, and left until this device
      // edits the key: its edit replaces it, as a last-writer-wins key's would.)
      return Reconciler.Decision(
        action: .skip(reason: "the store holds a \(value.kindName) the \(kind.rawValue) strategy cannot merge"),
        problem: .strategyCannotMerge(strategy: kind.rawValue, value: "\(value.kindName) in the store"))
    }
    return nil
  }

  /// Whether the local value is an edit to push: not the one the ledger agreed on, or
  /// present on a device with no history of the key.
  private static func holdsEdit(_ input: Input) -> Bool {
    guard let ledger = input.ledger else { return input.local != nil }
    return !ledger.agrees(with: input.local)
  }

  /// The device's state: the cached state with the local edit applied (`edited`), or the
  /// cached state itself when the local value is unchanged.
  private static func deviceState(
    _ input: Input, base: ReplicaState?, remote: ReplicaState?, dot: Stamp
  ) -> (state: ReplicaState, edited: Bool) {
    let local = input.local
    // Unchanged when the local value is what the device last wrote or agreed on (its
    // fingerprint), or what the cached state shows: a `.custom` rule declared only
    // after a merge shows another value, which is no edit.
    if let base,
      input.ledger?.agrees(with: local) == true
        || base.shows(local, merged: base.value(strategy: input.declared, key: input.key))
    {
      return (base, false)
    }
    if let base {
      // The edit was made from the value the device showed. When the store's state adds
      // nothing to that value and hides nothing behind it (another device wrote the
      // same), the edit was made from both: a removal removes what either held.
      let seen = remote.map { base.joined(with: $0) }
      let shown = base.value(strategy: input.declared, key: input.key)
      let from = seen.flatMap { joined in
        let value = joined.value(strategy: input.declared, key: input.key)
        // (Compared as sets: the store's state holding the same elements in another order
        // is what both saw; the edit then sets its own order.)
        return joined.shows(shown, merged: value, inOrder: false) && joined.showsAllItHolds(value) ? joined : nil
      }
      return ((from ?? base).edited(to: local, dot: dot), true)
    }
    if local != nil {
      // No history: the device has seen no removal, so its value only adds.
      return (ReplicaState(kind: input.kind).edited(to: local, dot: dot), true)
    }
    return (ReplicaState(kind: input.kind), false)
  }

  /// `state` with at most the declared capacity of elements, for a `.set` that declares one.
  private static func trimmed(_ state: ReplicaState, _ input: Input) -> ReplicaState {
    guard let capacity = input.capacity, input.declared.isSet else { return state }
    return state.trimmed(toCapacity: capacity)
  }

  /// The store's state as a merge sees it (a last-writer-wins record or a foreign value
  /// read as a state of `kind`), the stamp of its write, and whether it is of another
  /// kind (then written again as a state of `kind`).
  private static func storeState(of remote: RemoteState, kind: ReplicaKind) -> (ReplicaState?, Stamp?, Bool) {
    switch remote {
    case .replica(let record) where record.state.kind == kind:
      return (record.state, record.stamp, false)
    case .replica(let record):
      // Only the caller's choice of kind can differ from the record's; read it as a value.
      let value = record.state.value(strategy: .lastWriterWins, key: "", resolving: false)
      return (value.map { ReplicaState(foreign: $0, kind: kind) }, record.stamp, true)
    case .record(let record):
      // The key merged without a strategy before: the record's value is its own write.
      var versions = VersionVector()
      versions.include(record.stamp)
      let state = ReplicaState(kind: kind, groups: [:], context: versions)
        .edited(to: record.content.value, dot: record.stamp)
      return (state, record.stamp, true)
    case .foreign(let value) where kind.canMerge(value):
      return (ReplicaState(foreign: value, kind: kind), nil, false)
    case .foreign, .absent, .malformed, .unreadableCompressed, .unsupported:
      return (nil, nil, false)
    }
  }

  /// The state the ledger caches for the key, when it is of `kind`; `nil` for no history.
  private static func cachedState(_ entry: LedgerEntry?, kind: ReplicaKind) -> ReplicaState? {
    entry?.state.flatMap { $0.kind == kind ? $0 : nil }
  }

  private static func decision(
    _ input: Input, state: ReplicaState, push: Stamp?, agreed: Stamp?, reason: SyncAction.Reason
  ) -> Reconciler.Decision {
    // A pushed state is encoded here, with no lock held, once for its record, the
    // ledger and (a packed set's) its value.
    let state = push == nil ? state : state.keepingEncoding()
    let value = state.value(strategy: input.declared, key: input.key)
    let local: PropertyListValue?? = state.shows(input.local, merged: value) ? nil : .some(value)
    let agreed = push ?? agreed ?? input.ledger?.stamp ?? Stamp(generation: 1, origin: "")
    if push == nil, local == nil, input.ledger?.state == state, input.ledger?.stamp == agreed {
      return Reconciler.Decision(action: .none)
    }
    return Reconciler.Decision(
      action: .merge(
        StrategyMerge(state: state, push: push, local: local, agreed: agreed, value: value, reason: reason)))
  }
}

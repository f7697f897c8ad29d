import Foundation

/// Which side wins when both sides changed a key to different values and no resolver
/// decides.
public enum MismatchPolicy: Sendable, Equatable {
  /// Keep the local value and push it (what `sync()` does).
  case preferLocal
  /// Take the store's value (what an inbound store event does).
  case preferRemote
}

/// What a ``ConflictResolver`` decides for one key.
public enum ConflictResolution: Sendable, Equatable {
  /// Keep the local state and push it.
  case keepLocal
  /// Take the store's state.
  case keepRemote
  /// Write this value on both sides.
  case merged(PropertyListValue)
  /// Decide as if no resolver were set: `sync()` keeps the local state, an inbound event
  /// takes the remote one. Lets a resolver handle only the keys it knows.
  case usePolicy
}

/// Both sides of a conflict, handed to a ``ConflictResolver``. `nil` means deleted.
///
/// For ``SyncConfiguration/conflictResolver`` the sides are this device's and the
/// store's. For a ``MergeStrategy/custom(_:)`` rule they are two concurrent values in the
/// order of their writes, on whichever device merges them: `local` is the earlier write
/// (perhaps another device's) and `remote` the later, so that every device reaches the
/// same value; ``ConflictResolution/keepLocal`` keeps the earlier.
public struct Conflict: Sendable, Equatable {
  /// The synced key.
  public var key: String
  /// The local value, or `nil` when the key was deleted locally. (In a `.custom` rule,
  /// the earlier of the two writes.)
  public var local: PropertyListValue?
  /// The store's value, or `nil` when the store holds a tombstone. (In a `.custom` rule,
  /// the later of the two writes.)
  public var remote: PropertyListValue?

  /// Creates a conflict, for unit tests of a resolver.
  ///
  /// ```swift
  /// let conflict = Conflict(key: "tags", local: .array([.string("a")]), remote: .array([.string("b")]))
  /// #expect(myResolver(conflict) == .merged(.array([.string("a"), .string("b")])))
  /// ```
  public init(key: String, local: PropertyListValue?, remote: PropertyListValue?) {
    self.key = key
    self.local = local
    self.remote = remote
  }
}

/// Decides a conflict for one key. Should be a pure, fast function. It runs on the
/// thread of the operation, with no lock held; calling back into the coordinator that
/// asks it is not honoured (such a call returns at once with a warning).
public typealias ConflictResolver = @Sendable (Conflict) -> ConflictResolution

/// The outcome of reconciling one key: a value, not a side effect.
enum SyncAction: Sendable, Equatable {
  /// Why a push or pull happens, for the decision log.
  enum Reason: String, Sendable {
    case localEdit = "local edit"
    case firstUpload = "first upload"
    case absentFromStore = "absent from store"
    case storeLostWrite = "store lost our write"
    case conflictLocalWins = "conflict, local wins"
    case conflictRemoteWins = "conflict, remote wins"
    case resolverMerged = "conflict, resolver merged"
    case remoteNewer = "remote newer"
    case remoteDiffers = "same generation, other value: remote wins"
    case cloudHistory = "cloud history beats never-synced device"
    case foreignWrite = "foreign write"
    case mergedByStrategy = "merged by strategy"
    case strategyKeptLocal = "merged by strategy: local already holds both"
    case strategyKeptRemote = "merged by strategy: remote already holds both"

    /// Whether the pushed value is new to this device too, and is written locally.
    var writesLocally: Bool { self == .resolverMerged || self == .mergedByStrategy }
  }

  /// Nothing to do, and no store write.
  case none
  /// Write `value` to the store as this device's write at `generation`, a tombstone when
  /// `value` is `nil` (and write it locally too, for a merged value). `merging` is the
  /// merged state a strategy made; `nil` for an edit made from the agreed state alone.
  case push(generation: UInt64, value: PropertyListValue?, reason: Reason, merging: MergedPush? = nil)
  /// Write the agreed state to the store again, under its own stamp: the store lost it.
  case republish(stamp: Stamp, value: PropertyListValue?, reason: Reason)
  /// Apply the store's content locally; the ledger takes the record's stamp.
  case pull(stamp: Stamp, content: SyncRecord.Content, reason: Reason)
  /// Both sides already hold the same state: the ledger takes `stamp`, no write.
  case adopt(stamp: Stamp)
  /// Leave the key alone and report why.
  case skip(reason: String)
}

/// What a strategy's merge pushes beside its value: every write it includes, and what it
/// is made of.
struct MergedPush: Sendable, Equatable {
  var versions: VersionVector
  var data: MergeData

  /// What an edit to `value`, written at `stamp` from the agreed state `ledger`, pushes
  /// (see ``MergeState/edit(_:at:versions:kept:store:strategy:)``).
  static func edit(
    _ value: PropertyListValue?, at stamp: Stamp, from ledger: LedgerEntry?, strategy: MergeStrategy
  ) -> MergedPush {
    let edit = MergeState.edit(
      value, at: stamp, versions: ledger?.versions ?? VersionVector(), kept: ledger?.memory?.data, strategy: strategy)
    return MergedPush(versions: edit.versions, data: edit.data)
  }
}

/// The merge rules of DESIGN §4, as one pure function per key.
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
  /// believed), then applies the rules.
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
    strategy: MergeStrategy = .lastWriterWins, deviceID: String = ""
  ) -> Decision {
    var remote = RemoteState(storeValue: storeValue)
    if case .record(let record) = remote,
      let reason = Generation.implausibility(of: record.generation, agreed: max(ledger?.generation ?? 0, clock))
    {
      remote = .malformed(reason: reason)
    }
    var ledger = ledger
    if let ownOrigin, case .record(let record) = remote, record.origin == ownOrigin, local != nil,
      ledger.map({ record.stamp > $0.stamp }) ?? true
    {
      var regained = LedgerEntry(stamp: record.stamp, agreed: LedgerEntry.Agreed(record.content))
      if !strategy.isLastWriterWins {
        // The record's writes and parts are the regained state's.
        let state = MergeState(record: record, strategy: strategy)
        regained.memory = MergeMemory(versions: state.versions, record: state.versions, data: state.data)
      }
      if regained.agrees(with: local) { return Decision(action: .adopt(stamp: record.stamp)) }
      ledger = regained
    }
    let problem: RefusalReason? =
      switch remote {
      case .malformed(let reason): .malformedRecord(reason)
      case .unsupported(let version): .unsupportedFormat(version)
      case .absent, .record, .foreign: nil
      }
    var action = decide(
      key: key, local: local, remote: remote, ledger: ledger, policy: policy, resolver: resolver, clock: clock,
      strategy: strategy, deviceID: deviceID)
    // A strategy key's edit goes out with the state it was made from (the ledger entry
    // decided with, which may be one regained from the store above).
    if !strategy.isLastWriterWins, case .push(let generation, let value, let reason, nil) = action {
      action = .push(
        generation: generation, value: value, reason: reason,
        merging: .edit(value, at: Stamp(generation: generation, origin: deviceID), from: ledger, strategy: strategy))
    }
    return Decision(action: action, problem: problem)
  }

  static func decide(
    key: String,
    local: PropertyListValue?,
    remote: RemoteState,
    ledger: LedgerEntry?,
    policy: MismatchPolicy,
    resolver: ConflictResolver? = nil,
    clock: UInt64 = 0,
    strategy: MergeStrategy = .lastWriterWins,
    deviceID: String = ""
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
      // For a strategy key a foreign value's write is named after the value: each device
      // reads it at a generation of its own, so one shared empty origin would make two
      // different foreign values look like one writer's earlier and later writes.
      var foreign = foreignRecord(value, ledger: ledger)
      if !strategy.isLastWriterWins, foreign.origin.isEmpty { foreign.origin = foreignOrigin(of: value) }
      record = foreign
    }

    let agreedGeneration = ledger?.generation ?? 0
    // Lamport: this device's next write is numbered above everything it wrote or read
    // (for a strategy key, above every write its agreed state includes too).
    let floor = max(agreedGeneration, clock, record?.generation ?? 0, ledger?.memory?.versions.maximum ?? 0)
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
      // A strategy merges a never-synced value with the cloud's instead of dropping it.
      if !strategy.isLastWriterWins {
        return mergeByStrategy(
          key: key, local: local, localChanged: true, record: record, ledger: nil, strategy: strategy, floor: floor,
          deviceID: deviceID)
      }
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
    if !strategy.isLastWriterWins {
      // An edit made over another record of the agreed value is merged with that record
      // too: its writes and parts are news the edit must carry.
      if !ledger.agrees(with: record.content) || (record.stamp != ledger.stamp && localChanged) {
        return decideByVersions(
          key: key, local: local, localChanged: localChanged, record: record, ledger: ledger, strategy: strategy,
          floor: floor, deviceID: deviceID)
      }
      // The agreed value under another record: adopted, and what that record is made of
      // joins this device's memory (no write: what this device knows beyond it goes out
      // with its next write).
      if record.stamp != ledger.stamp, !localChanged { return .adopt(stamp: record.stamp) }
    }
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

  /// A key merged by a strategy whose store state differs from the agreed one, decided by
  /// which writes each includes (``VersionVector``): a record made after the agreed
  /// state is taken (unless the key was edited since: then merged with the edit); one
  /// made before it means the store lost a later state, which is published again; one
  /// made alongside it is merged (see ``MergeData``).
  private static func decideByVersions(
    key: String, local: PropertyListValue?, localChanged: Bool, record: SyncRecord, ledger: LedgerEntry,
    strategy: MergeStrategy, floor: UInt64, deviceID: String
  ) -> SyncAction {
    switch ledger.versions.order(of: record.versions) {
    case .before:
      return localChanged
        ? .push(generation: Generation.next(after: floor), value: local, reason: .localEdit)
        : .republish(stamp: ledger.stamp, value: local, reason: .storeLostWrite)
    case .after where !localChanged || LedgerEntry.Agreed(local) == LedgerEntry.Agreed(record.content):
      // (A local value that is a later state's is that state, written here by another
      // process on a shared suite.)
      return .pull(stamp: record.stamp, content: record.content, reason: .remoteNewer)
    case .after, .same, .concurrent:
      return mergeByStrategy(
        key: key, local: local, localChanged: localChanged, record: record, ledger: ledger, strategy: strategy,
        floor: floor, deviceID: deviceID)
    }
  }

  /// Merges this device's state (its local edit, or its agreed state) with the store's.
  /// A merge of the agreed state that holds nothing the store's state lacks takes that
  /// state; any other is pushed as a new write (and written locally when its value is
  /// new here), including both sides' writes, so that every device takes it as their
  /// successor.
  private static func mergeByStrategy(
    key: String, local: PropertyListValue?, localChanged: Bool, record: SyncRecord, ledger: LedgerEntry?,
    strategy: MergeStrategy, floor: UInt64, deviceID: String
  ) -> SyncAction {
    if case .custom = strategy { LockAudit.assertNoLockHeld(calling: "a custom merge strategy") }
    let next = Generation.next(after: floor)
    let stamp = Stamp(generation: next, origin: deviceID)
    let theirs = MergeState(record: record, strategy: strategy)
    let mine: MergeState
    if let ledger, !localChanged {
      mine = ledger.mergeState(local: local, strategy: strategy)
    } else {
      // An edit made over another record of the agreed value, one that hides nothing
      // behind that value, was made over that record too: it includes that record's writes
      // (a removal removes what either held). A record whose value hides a concurrent
      // write (a sibling) was not seen whole, and is merged with the edit instead.
      var base = ledger?.versions ?? VersionVector()
      if let ledger, ledger.agrees(with: record.content), theirs.showsAllItHolds {
        base = base.joined(with: record.versions)
      }
      mine = .edit(local, at: stamp, versions: base, kept: ledger?.memory?.data, store: theirs, strategy: strategy)
    }
    let merged = strategy.merge(key: key, mine, theirs)
    var versions = mine.versions.joined(with: theirs.versions)
    versions.include(stamp)
    let state = MergeState(value: merged.value, versions: versions, data: merged.data, stamp: stamp)
    // A local edit is news even when the merge holds nothing else (a removal of elements
    // the store's state never had): its write must reach the other devices.
    if !localChanged, state.holdsTheSame(as: theirs) {
      return .pull(stamp: record.stamp, content: record.content, reason: .strategyKeptRemote)
    }
    let kept = LedgerEntry.Agreed(merged.value) == LedgerEntry.Agreed(local)
    return .push(
      generation: next, value: merged.value, reason: kept ? .strategyKeptLocal : .mergedByStrategy,
      merging: MergedPush(versions: state.versions, data: state.data))
  }

  /// Whether the local state differs from the agreed one; with no history, whether the
  /// key is present.
  static func isLocallyChanged(_ local: PropertyListValue?, ledger: LedgerEntry?) -> Bool {
    ledger.map { !$0.agrees(with: local) } ?? (local != nil)
  }

  /// The origin a strategy key's foreign value is read under: `~` and the value's
  /// fingerprint, the same on every device.
  static func foreignOrigin(of value: PropertyListValue) -> String {
    "~" + String(value.fingerprint.rawValue, radix: 16)
  }

  /// A foreign value read as a record with the empty origin: at the agreed stamp when it
  /// is the agreed value, one generation above the ledger when it differs, at generation
  /// 1 with no history. (DESIGN says 0 there; 1 keeps a later republish of the foreign
  /// value from tying with the first edit made on top of it.)
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
}

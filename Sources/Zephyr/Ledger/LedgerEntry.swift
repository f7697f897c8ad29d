import Foundation

/// What this device and the store last agreed on for one key.
struct LedgerEntry: Sendable, Equatable {
  /// The agreed state: a value (by fingerprint) or a delete.
  enum Agreed: Sendable, Equatable {
    case value(Fingerprint)
    case deleted

    /// The state of a local value; `nil` is a delete.
    init(_ value: PropertyListValue?) {
      self = value.map { .value($0.fingerprint) } ?? .deleted
    }

    /// The state record content carries.
    init(_ content: SyncRecord.Content) {
      switch content {
      case .value(let value): self = .value(value.fingerprint)
      case .deleted: self = .deleted
      }
    }

    /// The fingerprint, deletes as 0: the tie-break between two different states written
    /// under one stamp (only a crash or a foreign writer can).
    var rawFingerprint: UInt64 {
      switch self {
      case .value(let fingerprint): fingerprint.rawValue
      case .deleted: 0
      }
    }
  }

  /// The generation of the agreed state.
  var generation: UInt64
  var agreed: Agreed
  /// The device that wrote the agreed state (empty for a foreign value).
  var origin = ""
  /// Set while a pull is being written to `UserDefaults`: how to tell, after a crash,
  /// whether the write happened, and what to fall back to when it did not.
  var pendingPull: PendingPull?
  /// For keys merged by a strategy: the whole merge state this device holds (a cache of
  /// the record's; see ``ReplicaState``).
  var state: ReplicaState?
  /// The foreign values the agreed state's record names, newest first (see
  /// ``ForeignName``): those it was made over, or, for a foreign value published again,
  /// the value itself.
  var madeOver: [ForeignName] = []

  /// A pull written ahead into the ledger, before its `UserDefaults` write.
  struct PendingPull: Sendable, Equatable {
    /// The local state before the pull.
    var localBefore: Agreed
    /// The entry before the pull; `nil` when the key had no history.
    var previous: Previous?
  }

  /// An entry without a pending pull (a ledger entry cannot hold itself).
  struct Previous: Sendable, Equatable {
    var generation: UInt64
    var agreed: Agreed
    var origin: String
    /// A strategy key's previous state: a merge a crash kept from `UserDefaults` falls
    /// back to it whole.
    var state: ReplicaState?
    /// The foreign values the previous state's record names.
    var madeOver: [ForeignName] = []
  }

  /// The agreed state's place in the order of writes.
  var stamp: Stamp { Stamp(generation: generation, origin: origin) }

  init(
    generation: UInt64, agreed: Agreed, origin: String = "", pendingPull: PendingPull? = nil,
    state: ReplicaState? = nil
  ) {
    self.generation = generation
    self.agreed = agreed
    self.origin = origin
    self.pendingPull = pendingPull
    self.state = state
  }

  /// The entry to decide with, given the current local state. A pending pull whose
  /// `UserDefaults` write never happened (the local state is still the one before it)
  /// falls back to the previous entry; otherwise the pull counts as applied. A local
  /// value that is neither was edited after the crash: against the pulled state it is a
  /// local edit, which is pushed.
  func resolved(local: PropertyListValue?) -> LedgerEntry? {
    guard let pending = pendingPull else { return self }
    if !agrees(with: local), LedgerEntry(generation: 0, agreed: pending.localBefore).agrees(with: local) {
      return pending.previous.map(LedgerEntry.init(previous:))
    }
    var applied = self
    applied.pendingPull = nil
    return applied
  }

  init(stamp: Stamp, agreed: Agreed, madeOver: [ForeignName] = []) {
    self.init(generation: stamp.generation, agreed: agreed, origin: stamp.origin)
    self.madeOver = madeOver
  }

  /// The history of a device that agreed on `record`: its stamp, its content and the
  /// foreign values it names.
  init(agreeingWith record: SyncRecord) {
    self.init(stamp: record.stamp, agreed: Agreed(record.content), madeOver: record.madeOver)
  }

  /// Whether a local value (or its absence) is the agreed state.
  func agrees(with local: PropertyListValue?) -> Bool {
    agreed == Agreed(local)
  }

  /// Whether record content is the agreed state.
  func agrees(with content: SyncRecord.Content) -> Bool {
    agreed == Agreed(content)
  }
}

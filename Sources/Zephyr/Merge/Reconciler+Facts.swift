import Foundation

extension Reconciler {
  /// What the last-writer-wins rules look at for one key, computed once: the kind of
  /// store value, the history (the ledger's agreed state), and whether each side changed
  /// since. The rules (`Reconciler.decide(_:_:)` with these facts) are then one `switch`.
  struct Facts: Sendable {
    /// The store's value as the rules see it.
    enum Remote: Sendable, Equatable {
      /// A record of a format newer than this Zephyr: left alone.
      case newerFormat(String)
      /// A strategy key's state record (never decided by these rules).
      case strategyRecord
      /// Nothing usable: absent, or a broken record. Absence tells nothing: never a delete.
      case absent
      /// A record, or a foreign value read as one (see ``Reconciler/foreignRecord(_:ledger:)``).
      case record(SyncRecord)
    }

    var key: String
    var local: PropertyListValue?
    var remote: Remote
    /// Whether the store's value is a foreign write (not a Zephyr record).
    var isForeign: Bool
    /// The agreed state; a record this device wrote when its ledger may be behind it
    /// (see ``Reconciler/Context/ownOrigin``).
    var history: LedgerEntry?
    /// The agreed state was regained from this device's own record, and the local value is it.
    var regainedOwnWrite = false
    /// The local state differs from the agreed one (with no history: it is present).
    var localChanged: Bool
    /// The store holds another state than the agreed one, written later in the order of writes.
    var remoteChanged = false
    /// The store holds another state than the agreed one, written earlier: its
    /// last-writer-wins dropped the agreed state, which is published again.
    var lostWrite = false
    /// The local state is the store's.
    var sameState = false
    /// The generation a push is numbered above (Lamport): everything this device wrote or read.
    var floor: UInt64
    /// The foreign values a push of `value` is made over, named in its record (see
    /// ``ForeignName``): the store's, then those the agreed state is or descends from;
    /// never `value` itself (a write of a foreign value is no publication of it). Derived
    /// when a push asks, so that a decision that pushes nothing fingerprints no value.
    func names(pushing value: PropertyListValue?) -> [ForeignName] {
      var store: ForeignName?
      if isForeign, case .record(let read) = remote, case .value(let foreign) = read.content {
        store = ForeignName(of: foreign)
      }
      return ForeignName.chain(store, history?.foreignAncestors ?? [], writing: value)
    }

    /// The foreign values the agreed state names once `record` is taken over it: those
    /// the record names, then those the agreed state was made over (the record replaced
    /// a state that follows them, so it follows them too). Not an agreed foreign value
    /// itself: a record may replace that by its stamp alone, and be a write from before
    /// it that the store brought back.
    func names(taking record: SyncRecord) -> [ForeignName] {
      let replaced = history.map { $0.isForeignValue ? [] : $0.madeOver } ?? []
      // (The record's own names as they are: a foreign value published again names itself.)
      return ForeignName.chain(nil, record.madeOver + replaced, writing: nil)
    }

    init(key: String, local: PropertyListValue?, remote: RemoteState, ledger: LedgerEntry?, context: Context) {
      self.key = key
      self.local = local
      isForeign = remote.isForeign
      var history = ledger
      let record: SyncRecord?
      switch remote {
      case .unsupported(let version):
        (self.remote, record) = (.newerFormat(version), nil)
      case .replica:
        (self.remote, record) = (.strategyRecord, nil)
      case .absent, .malformed, .unreadableCompressed:
        (self.remote, record) = (.absent, nil)
      case .record(let stored):
        (self.remote, record) = (.record(stored), stored)
        if let regained = Self.regained(stored, ledger: ledger, local: local, ownOrigin: context.ownOrigin) {
          history = regained
          regainedOwnWrite = regained.agrees(with: local)
        }
      case .foreign(let value):
        let read = Reconciler.foreignRecord(value, ledger: ledger)
        (self.remote, record) = (.record(read), read)
      }
      self.history = history
      localChanged = Reconciler.isLocallyChanged(local, ledger: history)
      floor = max(history?.generation ?? 0, context.clock, record?.generation ?? 0)
      guard let record else { return }
      sameState = LedgerEntry.Agreed(local) == LedgerEntry.Agreed(record.content)
      guard let history, !history.agrees(with: record.content) else { return }
      remoteChanged = Self.isLater(record, than: history)
      lostWrite = !remoteChanged
    }

    /// The agreed state taken from this device's own record, when its ledger may be
    /// behind it and the record is later than the ledger's entry (only with a local value).
    private static func regained(
      _ record: SyncRecord, ledger: LedgerEntry?, local: PropertyListValue?, ownOrigin: String?
    ) -> LedgerEntry? {
      guard let ownOrigin, record.origin == ownOrigin, local != nil, ledger.map({ record.stamp > $0.stamp }) ?? true
      else { return nil }
      return LedgerEntry(agreeingWith: record)
    }

    /// Whether `record`, another state than the agreed one, comes later in the order of
    /// writes. The agreed state itself under another stamp is no change; an earlier write
    /// with other content means the store dropped the agreed state.
    ///
    /// A foreign value has no place in that order: each device read it at a generation of
    /// its own, one above its own history. A record made over it names it
    /// (``SyncRecord/madeOver``) and is later than it, whatever its stamp (it may come
    /// from a device with less history); a record that does not name it is later only
    /// when stamped above where this device read it. Below that, it may be a write made
    /// before the foreign one that the store's last-writer-wins brought back: the store
    /// dropped the agreed state, which is published again. Conversely, the foreign value
    /// published again by a device that agreed on it (``SyncRecord/republishesForeignValue``)
    /// is earlier than an agreed state made over it, whatever its stamp.
    static func isLater(_ record: SyncRecord, than history: LedgerEntry) -> Bool {
      if record.republishesForeignValue, case .value(let value) = record.content {
        if !history.isForeignValue, history.madeOver.contains(ForeignName(of: value)) { return false }
      } else if let agreed = ForeignName(agreedIn: history), record.madeOver.contains(agreed) {
        return true
      }
      return record.stamp > history.stamp
        || (record.stamp == history.stamp
          && LedgerEntry.Agreed(record.content).rawFingerprint > history.agreed.rawFingerprint)
    }
  }
}

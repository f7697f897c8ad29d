import Foundation

/// What of the in-memory ledger has not reached the ledger file yet, and how to save it:
/// by appending the changed entries (the journal), or by rewriting the file (a snapshot)
/// when it is new, was reset, holds more than twice as many records as entries, or has
/// grown by more than its last snapshot's size (and at least
/// ``minimumAppendedBytes``) since.
///
/// A pull of a strategy key saves its entry twice (written ahead of its `UserDefaults`
/// write with the state to fall back to, then settled). Appended, the state to fall back
/// to is the one the file holds already, and the settled entry the one written ahead: the
/// records refer to them (``LedgerReference``) instead of repeating them, so a pull
/// appends its new state once.
struct LedgerJournal: Sendable {
  /// Entries changed since the last save (`nil`: removed).
  var changes: [String: LedgerEntry?] = [:]
  /// Whether the clock moved since the last save.
  var clockMoved = false
  /// Whether the next save must rewrite the whole file.
  var needsSnapshot = false
  /// Records in the file, to tell when appending has gone on long enough.
  var records = 0
  /// Bytes of the file as its last snapshot left it, and bytes appended since: a file
  /// that doubled is compacted. (A file loaded counts as appended whole.)
  var snapshotBytes = 0
  var appendedBytes = 0
  static let minimumAppendedBytes = 512 * 1024
  /// The entries the file holds, as this process saved them (empty until its first
  /// save): what an appended record may refer to.
  var onFile: [String: LedgerEntry] = [:]
  /// Why the last save failed, while it has not succeeded since.
  var failure: String?

  /// One save to make, taken out of the journal so that it can be written without a lock.
  struct Save: Sendable {
    enum Kind: Sendable {
      /// The changed entries, the clock when it moved, and the changes whose records
      /// refer to the entry on file.
      case append([String: LedgerEntry?], clock: UInt64?, references: [String: LedgerReference])
      case snapshot(Ledger)
    }
    var kind: Kind
    /// Records the file holds once the save succeeded.
    var records: Int
  }

  init() {}

  /// The journal of a ledger loaded from a file of `records` records (none: the file is
  /// rewritten at the first save) and `fileBytes` bytes. Where the file's last snapshot
  /// ends is not recorded: the whole file counts as appended, so a file past
  /// ``minimumAppendedBytes`` is compacted at its first save, once a launch at most.
  init(records: Int, fileBytes: Int) {
    self.records = records
    needsSnapshot = records == 0
    appendedBytes = fileBytes
  }

  var isEmpty: Bool { changes.isEmpty && !needsSnapshot && !clockMoved }

  /// The save that brings the file up to `ledger`, or `nil` when it already is.
  func pendingSave(of ledger: Ledger) -> Save? {
    guard !isEmpty else { return nil }
    let appended = records + changes.count
    if needsSnapshot || appended > 2 * ledger.entries.count + 64
      || appendedBytes > max(Self.minimumAppendedBytes, snapshotBytes)
    {
      return Save(kind: .snapshot(ledger), records: ledger.entries.count)
    }
    var references: [String: LedgerReference] = [:]
    for (key, entry) in changes {
      guard let entry, let held = onFile[key] else { continue }
      references[key] = LedgerReference(entry, onFile: held)
    }
    return Save(
      kind: .append(changes, clock: clockMoved ? ledger.clock : nil, references: references), records: appended)
  }

  /// Records that `save` reached the file, in `bytes`: the changes it carried are no
  /// longer pending.
  mutating func saved(_ save: Save, bytes: Int, ledger: Ledger) {
    switch save.kind {
    case .snapshot(let written):
      // Entries changed after the snapshot was taken stay pending.
      changes = changes.filter { key, entry in written[key] != entry }
      needsSnapshot = written.epoch != ledger.epoch || written.incarnation != ledger.incarnation
      clockMoved = written.clock != ledger.clock
      onFile = written.entries
      snapshotBytes = bytes
      appendedBytes = 0
    case .append(let written, let clock, _):
      changes = changes.filter { key, entry in written[key] != .some(entry) }
      if let clock { clockMoved = clock != ledger.clock }
      for (key, entry) in written { onFile[key] = entry }
      appendedBytes += bytes
    }
    records = save.records
    failure = nil
  }

  /// Records a failed save: the next one rewrites the whole file.
  mutating func failed(_ reason: String) {
    needsSnapshot = true
    failure = reason
  }

  /// Notes a changed entry.
  mutating func note(_ key: String, _ entry: LedgerEntry?) {
    changes[key] = .some(entry)
  }

  /// Forgets pending changes: the next save rewrites the file from scratch.
  mutating func reset() {
    changes = [:]
    needsSnapshot = true
  }
}

/// How an appended record refers to the entry the file holds for its key, instead of
/// repeating a state (see ``LedgerJournal``).
enum LedgerReference: Sendable, Equatable {
  /// The entry on file, written ahead of a pull, with its pull settled: the record names
  /// the key only.
  case settlesPull
  /// A pull written ahead, whose state to fall back to is the entry on file's: the
  /// record carries the new state only.
  case fallsBackToFile

  /// How a record of `entry` may refer to `held`, the entry on file; `nil` when it must
  /// be written whole. (States shared with the ledger compare by identity, at once.)
  init?(_ entry: LedgerEntry, onFile held: LedgerEntry) {
    if entry.pendingPull == nil, held.pendingPull != nil {
      var settled = held
      settled.pendingPull = nil
      if settled == entry {
        self = .settlesPull
        return
      }
    }
    if let state = entry.pendingPull?.previous?.state, state == held.state {
      self = .fallsBackToFile
      return
    }
    return nil
  }
}

extension LedgerFile {
  /// Writes `save` to the file; the bytes written.
  func write(_ save: LedgerJournal.Save) throws -> Int {
    switch save.kind {
    case .append(let changes, let clock, let references):
      return try append(changes, clock: clock, references: references)
    case .snapshot(let ledger):
      return try writeSnapshot(ledger)
    }
  }
}

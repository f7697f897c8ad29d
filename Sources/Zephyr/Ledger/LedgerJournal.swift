import Foundation

/// What of the in-memory ledger has not reached the ledger file yet, and how to save it:
/// by appending the changed entries (the journal), or by rewriting the file (a snapshot)
/// when it is new, was reset, or has grown to more than twice its entries (or by more
/// than ``maximumAppendedMemoryBytes`` of strategy keys' states).
struct LedgerJournal: Sendable {
  /// Entries changed since the last save (`nil`: removed).
  var changes: [String: LedgerEntry?] = [:]
  /// Whether the clock moved since the last save.
  var clockMoved = false
  /// Whether the next save must rewrite the whole file.
  var needsSnapshot = false
  /// Records in the file, to tell when appending has gone on long enough.
  var records = 0
  /// Bytes of strategy keys' states (``ReplicaState``) appended since the last snapshot:
  /// every append of such a key carries its whole state again.
  var appendedMemoryBytes = 0
  static let maximumAppendedMemoryBytes = 512 * 1024
  /// Why the last save failed, while it has not succeeded since.
  var failure: String?

  /// One save to make, taken out of the journal so that it can be written without a lock.
  struct Save: Sendable {
    enum Kind: Sendable {
      /// The changed entries, and the clock when it moved.
      case append([String: LedgerEntry?], clock: UInt64?)
      case snapshot(Ledger)
    }
    var kind: Kind
    /// Records the file holds once the save succeeded.
    var records: Int
    /// Remembered merge values appended since the last snapshot, once it succeeded.
    var appendedMemoryBytes = 0
  }

  var isEmpty: Bool { changes.isEmpty && !needsSnapshot && !clockMoved }

  /// The save that brings the file up to `ledger`, or `nil` when it already is.
  func pendingSave(of ledger: Ledger) -> Save? {
    guard !isEmpty else { return nil }
    let appended = records + changes.count
    let memoryBytes = appendedMemoryBytes + changes.values.reduce(0) { $0 + ($1?.state?.estimatedBytes ?? 0) }
    if needsSnapshot || appended > 2 * ledger.entries.count + 64 || memoryBytes > Self.maximumAppendedMemoryBytes {
      return Save(kind: .snapshot(ledger), records: ledger.entries.count)
    }
    return Save(
      kind: .append(changes, clock: clockMoved ? ledger.clock : nil), records: appended,
      appendedMemoryBytes: memoryBytes)
  }

  /// Records that `save` reached the file: the changes it carried are no longer pending.
  mutating func saved(_ save: Save, ledger: Ledger) {
    switch save.kind {
    case .snapshot(let written):
      // Entries changed after the snapshot was taken stay pending.
      changes = changes.filter { key, entry in written[key] != entry }
      needsSnapshot = written.epoch != ledger.epoch || written.incarnation != ledger.incarnation
      clockMoved = written.clock != ledger.clock
    case .append(let written, let clock):
      changes = changes.filter { key, entry in written[key] != .some(entry) }
      if let clock { clockMoved = clock != ledger.clock }
    }
    records = save.records
    appendedMemoryBytes = save.appendedMemoryBytes
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

extension LedgerFile {
  /// Writes `save` to the file.
  func write(_ save: LedgerJournal.Save) throws {
    switch save.kind {
    case .append(let changes, let clock):
      try append(changes, clock: clock)
    case .snapshot(let ledger):
      try writeSnapshot(ledger)
    }
  }
}

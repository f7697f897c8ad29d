import Foundation

/// The ledger file: a header with the epoch, then one record per entry change. A save
/// either rewrites the file (a snapshot: one record per entry) or appends the changed
/// entries (the journal), so a sync that changes one key writes one small record.
///
/// Every record carries its own checksum. A torn or damaged record ends the file: what
/// came before it is read, what follows is ignored. That only ever yields an older
/// agreed state, which the merge rules recover from (a value already in the store is
/// adopted again); a damaged header discards the whole ledger.
enum LedgerCodec {
  private static let magic: [UInt8] = Array("ZLG3".utf8)

  /// A header followed by a record for every entry.
  static func snapshot(_ ledger: Ledger) -> Data {
    var bytes = magic
    var header: [UInt8] = []
    appendString(ledger.epoch, to: &header)
    bytes += header
    appendWord(checksum(header), to: &bytes)
    appendClock(ledger.clock, to: &bytes)
    appendIncarnation(ledger.incarnation, to: &bytes)
    // Keys in order: the same ledger is the same bytes in every process.
    for (key, entry) in ledger.entries.sorted(by: { $0.key < $1.key }) {
      appendRecord(key: key, entry: entry, to: &bytes)
    }
    return Data(bytes)
  }

  /// Records for changed entries (`nil`: the entry was removed) and the clock when it
  /// moved, to append to a file; the changes in `references` refer to the entry the file
  /// holds for their key (see ``LedgerReference``).
  static func journal(
    _ changes: [String: LedgerEntry?], clock: UInt64? = nil, references: [String: LedgerReference] = [:]
  ) -> Data {
    var bytes: [UInt8] = []
    if let clock { appendClock(clock, to: &bytes) }
    // Keys in order: which records a torn append keeps does not depend on hash order.
    for (key, entry) in changes.sorted(by: { $0.key < $1.key }) {
      switch references[key] {
      case .settlesPull?:
        appendFramed(to: &bytes) { payload in
          appendString(key, to: &payload)
          payload.append(LedgerRecordKind.settled.rawValue)
        }
      case .fallsBackToFile?:
        appendRecord(key: key, entry: entry, fallingBackToFile: true, to: &bytes)
      case nil:
        appendRecord(key: key, entry: entry, to: &bytes)
      }
    }
    return Data(bytes)
  }

  /// Reads a file: the ledger, how many records it holds, and whether a damaged tail was
  /// ignored. Throws when the header is unusable.
  static func decode(_ data: Data) throws(LedgerError) -> (ledger: Ledger, records: Int, damagedTail: Bool) {
    let bytes = [UInt8](data)
    guard bytes.count >= magic.count, Array(bytes.prefix(magic.count)) == magic else {
      throw LedgerError.corrupt("not a ledger file")
    }
    var reader = ByteReader(bytes: bytes, position: magic.count)
    let headerStart = reader.position
    let epoch = try reader.string()
    let headerEnd = reader.position
    guard try reader.word() == checksum(bytes[headerStart..<headerEnd]) else {
      throw LedgerError.corrupt("header checksum mismatch")
    }
    var ledger = Ledger(epoch: epoch)
    var records = 0
    var damagedTail = false
    while !reader.isAtEnd {
      guard let record = try? reader.record() else {
        damagedTail = true
        break
      }
      ledger.apply(record)
      if record.isOfKey { records += 1 }
    }
    return (ledger, records, damagedTail)
  }

  /// A clock record: an empty key (no synced key is empty) and its kind.
  private static func appendClock(_ clock: UInt64, to bytes: inout [UInt8]) {
    appendLedgerRecord(kind: .clock, to: &bytes) { appendWord(clock, to: &$0) }
  }

  /// An incarnation record: an empty key and its kind.
  private static func appendIncarnation(_ incarnation: String, to bytes: inout [UInt8]) {
    appendLedgerRecord(kind: .incarnation, to: &bytes) { appendString(incarnation, to: &$0) }
  }

  /// A record of the ledger itself (not of a key): the empty key, `kind`, then `body`.
  private static func appendLedgerRecord(
    kind: LedgerRecordKind, to bytes: inout [UInt8], _ body: (inout [UInt8]) -> Void
  ) {
    appendFramed(to: &bytes) { payload in
      appendString("", to: &payload)
      payload.append(kind.rawValue)
      body(&payload)
    }
  }

  /// A record's payload, made by `body`, framed by its length and checksum.
  private static func appendFramed(to bytes: inout [UInt8], _ body: (inout [UInt8]) -> Void) {
    var payload: [UInt8] = []
    body(&payload)
    appendWord(UInt64(payload.count), to: &bytes)
    bytes += payload
    appendWord(checksum(payload), to: &bytes)
  }

  /// A key's entry (`nil`: removed). With `fallingBackToFile`, a pending pull's state to
  /// fall back to is not written: it is the state of the entry before this record.
  private static func appendRecord(
    key: String, entry: LedgerEntry?, fallingBackToFile: Bool = false, to bytes: inout [UInt8]
  ) {
    appendFramed(to: &bytes) { payload in
      appendEntry(key: key, entry: entry, fallingBackToFile: fallingBackToFile, to: &payload)
    }
  }

  private static func appendEntry(
    key: String, entry: LedgerEntry?, fallingBackToFile: Bool, to payload: inout [UInt8]
  ) {
    appendString(key, to: &payload)
    switch entry?.agreed {
    case nil:
      payload.append(LedgerRecordKind.removed.rawValue)
    case .deleted?:
      payload.append(LedgerRecordKind.deleted.rawValue)
      appendWord(entry?.generation ?? 0, to: &payload)
      appendString(entry?.origin ?? "", to: &payload)
    case .value(let fingerprint)?:
      payload.append(LedgerRecordKind.value.rawValue)
      appendWord(entry?.generation ?? 0, to: &payload)
      appendString(entry?.origin ?? "", to: &payload)
      appendWord(fingerprint.rawValue, to: &payload)
    }
    if let pending = entry?.pendingPull {
      payload.append(1)
      appendAgreed(pending.localBefore, to: &payload)
      if let previous = pending.previous {
        payload.append(1)
        appendWord(previous.generation, to: &payload)
        appendString(previous.origin, to: &payload)
        appendAgreed(previous.agreed, to: &payload)
      } else {
        payload.append(0)
      }
    } else if entry != nil {
      payload.append(0)
    }
    if let state = entry?.state {
      payload.append(LedgerEntryPart.state.rawValue)
      appendState(state, to: &payload)
    }
    appendNames(entry?.madeOver ?? [], part: .madeOver, to: &payload)
    appendNames(entry?.pendingPull?.previous?.madeOver ?? [], part: .previousMadeOver, to: &payload)
    if let state = entry?.pendingPull?.previous?.state {
      if fallingBackToFile {
        payload.append(LedgerEntryPart.previousStateOnFile.rawValue)
      } else {
        payload.append(LedgerEntryPart.previousState.rawValue)
        appendState(state, to: &payload)
      }
    }
  }

  /// Foreign values' names behind `part`: their count, then each (words); nothing for none.
  private static func appendNames(_ names: [ForeignName], part: LedgerEntryPart, to payload: inout [UInt8]) {
    guard !names.isEmpty else { return }
    payload.append(part.rawValue)
    appendWord(UInt64(names.count), to: &payload)
    for name in names { appendWord(UInt64(name.rawValue), to: &payload) }
  }

  private static func appendAgreed(_ agreed: LedgerEntry.Agreed, to bytes: inout [UInt8]) {
    switch agreed {
    case .deleted:
      bytes.append(0)
    case .value(let fingerprint):
      bytes.append(1)
      appendWord(fingerprint.rawValue, to: &bytes)
    }
  }

  static func checksum(_ bytes: some Sequence<UInt8>) -> UInt64 {
    var hasher = FNV1a()
    for byte in bytes { hasher.byte(byte) }
    return hasher.state
  }

  static func appendWord(_ word: UInt64, to bytes: inout [UInt8]) {
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
  }

  static func appendString(_ text: String, to bytes: inout [UInt8]) {
    appendWord(UInt64(text.utf8.count), to: &bytes)
    bytes.append(contentsOf: text.utf8)
  }
}

extension Ledger {
  /// Applies one record read from the file. A record that refers to what the file holds
  /// for its key finds it as the records before it left it: a state to fall back to that
  /// did not read (lost on its own, see ``ByteReader``) is lost here too, and a settling
  /// of an entry with no pull pending changes nothing.
  fileprivate mutating func apply(_ record: ByteReader.Record) {
    switch record {
    case .entry(let key, var entry, let fallsBackToFile):
      if fallsBackToFile { entry?.pendingPull?.previous?.state = self[key]?.state }
      self[key] = entry
    case .settled(let key):
      self[key]?.pendingPull = nil
    case .clock(let clock):
      self.clock = max(self.clock, clock)
    case .incarnation(let incarnation):
      self.incarnation = incarnation
    }
  }
}

import Foundation

/// Why a ledger could not be read.
enum LedgerError: Error, Equatable {
  case corrupt(String)
}

struct ByteReader {
  let bytes: [UInt8]
  var position: Int

  var isAtEnd: Bool { position == bytes.count }

  mutating func byte() throws(LedgerError) -> UInt8 {
    guard position < bytes.count else { throw LedgerError.corrupt("truncated") }
    defer { position += 1 }
    return bytes[position]
  }

  mutating func word() throws(LedgerError) -> UInt64 {
    guard bytes.count - position >= 8 else { throw LedgerError.corrupt("truncated") }
    var value: UInt64 = 0
    for index in 0..<8 { value |= UInt64(bytes[position + index]) << UInt64(index * 8) }
    position += 8
    return value
  }

  mutating func string() throws(LedgerError) -> String {
    let length = try word()
    guard length <= UInt64(bytes.count - position) else { throw LedgerError.corrupt("truncated string") }
    let end = position + Int(length)
    defer { position = end }
    return String(decoding: bytes[position..<end], as: UTF8.self)
  }

  mutating func agreed() throws(LedgerError) -> LedgerEntry.Agreed {
    switch try byte() {
    case 0: return .deleted
    case 1: return .value(Fingerprint(rawValue: try word()))
    default: throw LedgerError.corrupt("unknown agreed kind")
    }
  }

  /// Foreign values' names: their count, then each (words).
  private mutating func foreignNames() throws(LedgerError) -> [ForeignName] {
    let count = try word()
    guard (1...UInt64(ForeignName.maximumNamed)).contains(count) else { throw LedgerError.corrupt("bad name count") }
    var names: [ForeignName] = []
    for _ in 0..<count {
      guard let raw = UInt32(exactly: try word()) else { throw LedgerError.corrupt("bad foreign name") }
      names.append(ForeignName(rawValue: raw))
    }
    return names
  }

  /// What one record of the file says.
  enum Record {
    /// A key's entry; `nil` means removed. With `fallsBackToFile`, its pending pull's
    /// state to fall back to is the state of the key's entry before this record.
    case entry(String, LedgerEntry?, fallsBackToFile: Bool)
    /// The key's entry before this record, its pending pull settled.
    case settled(String)
    /// The device's clock.
    case clock(UInt64)
    /// The ledger's incarnation.
    case incarnation(String)

    /// Whether the record is of a key (not of the ledger itself).
    var isOfKey: Bool {
      switch self {
      case .entry, .settled: true
      case .clock, .incarnation: false
      }
    }
  }

  /// One record. Throws on any damage.
  mutating func record() throws(LedgerError) -> Record {
    var payload = try framedPayload()
    let key = try payload.string()
    guard let kind = LedgerRecordKind(rawValue: try payload.byte()) else {
      throw LedgerError.corrupt("unknown record kind")
    }
    var entry: LedgerEntry?
    switch kind {
    case .deleted:
      let generation = try payload.word()
      entry = LedgerEntry(generation: generation, agreed: .deleted, origin: try payload.string())
    case .value:
      let generation = try payload.word()
      let origin = try payload.string()
      entry = LedgerEntry(
        generation: generation, agreed: .value(Fingerprint(rawValue: try payload.word())), origin: origin)
    case .removed: entry = nil
    case .settled:
      guard payload.isAtEnd, !key.isEmpty else { throw LedgerError.corrupt("bad settled record") }
      return .settled(key)
    case .clock:
      let clock = try payload.word()
      guard payload.isAtEnd, key.isEmpty, clock <= Generation.maximum else { throw LedgerError.corrupt("bad clock") }
      return .clock(clock)
    case .incarnation:
      let incarnation = try payload.string()
      guard payload.isAtEnd, key.isEmpty, (1...16).contains(incarnation.count) else {
        throw LedgerError.corrupt("bad incarnation")
      }
      return .incarnation(incarnation)
    }
    var fallsBackToFile = false
    if var read = entry {
      try payload.readPendingPull(into: &read)
      fallsBackToFile = payload.readParts(into: &read)
      entry = read
    }
    guard payload.isAtEnd, (entry?.generation ?? 0) <= Generation.maximum else {
      throw LedgerError.corrupt("bad record")
    }
    return .entry(key, entry, fallsBackToFile: fallsBackToFile)
  }

  /// The next record's payload, its length and checksum checked.
  private mutating func framedPayload() throws(LedgerError) -> ByteReader {
    let length = try word()
    guard length <= UInt64(bytes.count - position), bytes.count - position - Int(length) >= 8 else {
      throw LedgerError.corrupt("truncated record")
    }
    let payloadEnd = position + Int(length)
    let payload = ByteReader(bytes: Array(bytes[position..<payloadEnd]), position: 0)
    position = payloadEnd
    guard try word() == LedgerCodec.checksum(payload.bytes) else { throw LedgerError.corrupt("record checksum") }
    return payload
  }

  /// An entry's pending pull, after a flag byte (1: present).
  private mutating func readPendingPull(into entry: inout LedgerEntry) throws(LedgerError) {
    guard try byte() == 1 else { return }
    let localBefore = try agreed()
    var previous: LedgerEntry.Previous?
    if try byte() == 1 {
      let generation = try word()
      let origin = try string()
      previous = LedgerEntry.Previous(generation: generation, agreed: try agreed(), origin: origin)
    }
    entry.pendingPull = LedgerEntry.PendingPull(localBefore: localBefore, previous: previous)
  }

  /// The optional parts after an entry, each behind its ``LedgerEntryPart`` marker. A
  /// state that does not read is lost on its own (the key merges as if it had no
  /// history, which removes nothing), never the entry or the ledger. Returns whether the
  /// state to fall back to is the one on file (``LedgerEntryPart/previousStateOnFile``).
  private mutating func readParts(into entry: inout LedgerEntry) -> Bool {
    var fallsBackToFile = false
    do {
      while !isAtEnd {
        let start = position
        switch LedgerEntryPart(rawValue: try byte()) {
        case .state?: entry.state = try state()
        case .previousState? where entry.pendingPull?.previous != nil: entry.pendingPull?.previous?.state = try state()
        case .previousStateOnFile? where entry.pendingPull?.previous != nil: fallsBackToFile = true
        case .madeOver?: entry.madeOver = try foreignNames()
        case .previousMadeOver? where entry.pendingPull?.previous != nil:
          entry.pendingPull?.previous?.madeOver = try foreignNames()
        default: throw LedgerError.corrupt("unknown entry part \(bytes[start])")
        }
      }
    } catch {
      entry.state = nil
      position = bytes.count
      return false
    }
    return fallsBackToFile
  }
}

/// What a ledger record holds, the byte after its key.
enum LedgerRecordKind: UInt8 {
  /// A key's entry, agreed deleted.
  case deleted = 0
  /// A key's entry, agreed on a value (by fingerprint).
  case value = 1
  /// A key's entry removed.
  case removed = 2
  /// The device's clock (under the empty key).
  case clock = 3
  /// The ledger's incarnation (under the empty key).
  case incarnation = 4
  /// A key's entry before this record, its pending pull settled.
  case settled = 5
}

/// The optional parts after an entry, each behind its marker byte.
enum LedgerEntryPart: UInt8 {
  /// The key's merge state.
  case state = 5
  /// The merge state of the entry a pending pull falls back to.
  case previousState = 6
  /// The entry a pending pull falls back to has the state of the key's entry before
  /// this record (no bytes follow).
  case previousStateOnFile = 7
  /// The foreign values the agreed state's record names (a count, then words).
  case madeOver = 8
  /// The foreign values the record of the entry a pending pull falls back to names.
  case previousMadeOver = 9
}

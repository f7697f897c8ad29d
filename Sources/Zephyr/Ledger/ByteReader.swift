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

  /// What one record of the file says.
  enum Record {
    /// A key's entry; `nil` means removed.
    case entry(String, LedgerEntry?)
    /// The device's clock.
    case clock(UInt64)
    /// The ledger's incarnation.
    case incarnation(String)
  }

  /// One record. Throws on any damage.
  mutating func record() throws(LedgerError) -> Record {
    let length = try word()
    guard length <= UInt64(bytes.count - position), bytes.count - position - Int(length) >= 8 else {
      throw LedgerError.corrupt("truncated record")
    }
    let payloadEnd = position + Int(length)
    var payload = ByteReader(bytes: Array(bytes[position..<payloadEnd]), position: 0)
    position = payloadEnd
    guard try word() == LedgerCodec.checksum(payload.bytes) else { throw LedgerError.corrupt("record checksum") }
    let key = try payload.string()
    var entry: LedgerEntry?
    switch try payload.byte() {
    case 0:
      let generation = try payload.word()
      entry = LedgerEntry(generation: generation, agreed: .deleted, origin: try payload.string())
    case 1:
      let generation = try payload.word()
      let origin = try payload.string()
      entry = LedgerEntry(
        generation: generation, agreed: .value(Fingerprint(rawValue: try payload.word())), origin: origin)
    case 2: entry = nil
    case 3:
      let clock = try payload.word()
      guard payload.isAtEnd, key.isEmpty, clock <= Generation.maximum else { throw LedgerError.corrupt("bad clock") }
      return .clock(clock)
    case 4:
      let incarnation = try payload.string()
      guard payload.isAtEnd, key.isEmpty, (1...16).contains(incarnation.count) else {
        throw LedgerError.corrupt("bad incarnation")
      }
      return .incarnation(incarnation)
    default: throw LedgerError.corrupt("unknown record kind")
    }
    if entry != nil, try payload.byte() == 1 {
      let localBefore = try payload.agreed()
      var previous: LedgerEntry.Previous?
      if try payload.byte() == 1 {
        let generation = try payload.word()
        let origin = try payload.string()
        previous = LedgerEntry.Previous(generation: generation, agreed: try payload.agreed(), origin: origin)
      }
      entry?.pendingPull = LedgerEntry.PendingPull(localBefore: localBefore, previous: previous)
    }
    if entry != nil, !payload.isAtEnd {
      // A state that does not read is lost on its own (the key merges as if it had no
      // history, which removes nothing), never the entry or the ledger.
      do {
        while !payload.isAtEnd {
          let start = payload.position
          switch try payload.byte() {
          case 5: entry?.state = try payload.state()
          case 6 where entry?.pendingPull?.previous != nil: entry?.pendingPull?.previous?.state = try payload.state()
          case 4:
            // A first-format memory of the entry a pending pull falls back to: dropped.
            _ = try payload.memory()
          default:
            // Markers 1 to 3: a first-format memory, upgraded at the key's next merge.
            payload.position = start
            entry?.memory = try payload.memory()
          }
        }
      } catch {
        entry?.state = nil
        payload.position = payload.bytes.count
      }
    }
    guard payload.isAtEnd, (entry?.generation ?? 0) <= Generation.maximum else {
      throw LedgerError.corrupt("bad record")
    }
    return .entry(key, entry)
  }
}

import Foundation

/// What this device and the store last agreed on for one key.
struct LedgerEntry: Sendable, Equatable {
  /// The agreed state: a value (by fingerprint) or a delete.
  enum Agreed: Sendable, Equatable {
    case value(Fingerprint)
    case deleted
  }

  /// The generation of the agreed state.
  var generation: UInt64
  var agreed: Agreed

  /// Whether a local value (or its absence) is the agreed state.
  func agrees(with local: PropertyListValue?) -> Bool {
    switch (agreed, local) {
    case (.deleted, nil): true
    case (.value(let fingerprint), let value?): value.fingerprint == fingerprint
    default: false
    }
  }

  /// Whether record content is the agreed state.
  func agrees(with content: SyncRecord.Content) -> Bool {
    switch content {
    case .value(let value): agrees(with: value)
    case .deleted: agreed == .deleted
    }
  }
}

/// The local ledger: per synced key, the state both sides last agreed on.
///
/// The ledger lives outside the synced domain, in a file written atomically. It carries
/// an `epoch` that is also written into the `UserDefaults` domain: when the two differ
/// (the domain was reset, or restored without the ledger), the ledger is discarded, so a
/// wiped domain degrades to "no history" and pulls from the cloud instead of pushing
/// deletes for every key it no longer has.
struct Ledger: Sendable, Equatable {
  var epoch: String
  var entries: [String: LedgerEntry] = [:]

  subscript(key: String) -> LedgerEntry? {
    get { entries[key] }
    set { entries[key] = newValue }
  }
}

// MARK: - Binary encoding

extension Ledger {
  private static let magic: [UInt8] = Array("ZLG1".utf8)

  /// A compact binary encoding with a trailing checksum, so a torn or corrupted file is
  /// detected instead of being read as wrong history.
  func encoded() -> Data {
    var bytes: [UInt8] = Self.magic
    bytes.reserveCapacity(16 + entries.count * 40)
    appendString(epoch, to: &bytes)
    append(UInt64(entries.count), to: &bytes)
    for (key, entry) in entries {
      appendString(key, to: &bytes)
      append(entry.generation, to: &bytes)
      switch entry.agreed {
      case .deleted:
        bytes.append(0)
      case .value(let fingerprint):
        bytes.append(1)
        append(fingerprint.rawValue, to: &bytes)
      }
    }
    var checksum = FNV1a()
    for byte in bytes { checksum.byte(byte) }
    append(checksum.state, to: &bytes)
    return Data(bytes)
  }

  /// Decodes ``encoded()``; throws ``LedgerError`` on any inconsistency.
  init(decoding data: Data) throws(LedgerError) {
    let bytes = [UInt8](data)
    guard bytes.count >= Self.magic.count + 8, Array(bytes.prefix(4)) == Self.magic else {
      throw LedgerError.corrupt("not a ledger file")
    }
    var checksum = FNV1a()
    for byte in bytes.dropLast(8) { checksum.byte(byte) }
    var reader = ByteReader(bytes: bytes, position: bytes.count - 8)
    guard try reader.word() == checksum.state else { throw LedgerError.corrupt("checksum mismatch") }
    reader = ByteReader(bytes: Array(bytes.dropLast(8)), position: Self.magic.count)
    epoch = try reader.string()
    let count = try reader.word()
    guard count <= UInt64(bytes.count) else { throw LedgerError.corrupt("entry count \(count)") }
    for _ in 0..<count {
      let key = try reader.string()
      let generation = try reader.word()
      guard generation <= Generation.maximum else { throw LedgerError.corrupt("generation \(generation)") }
      switch try reader.byte() {
      case 0: entries[key] = LedgerEntry(generation: generation, agreed: .deleted)
      case 1:
        let fingerprint = Fingerprint(rawValue: try reader.word())
        entries[key] = LedgerEntry(generation: generation, agreed: .value(fingerprint))
      default: throw LedgerError.corrupt("unknown entry kind")
      }
    }
    guard reader.isAtEnd else { throw LedgerError.corrupt("trailing bytes") }
  }

  private func append(_ word: UInt64, to bytes: inout [UInt8]) {
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
  }

  private func appendString(_ text: String, to bytes: inout [UInt8]) {
    append(UInt64(text.utf8.count), to: &bytes)
    bytes.append(contentsOf: text.utf8)
  }
}

/// Why a ledger could not be read.
enum LedgerError: Error, Equatable {
  case corrupt(String)
}

private struct ByteReader {
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
}

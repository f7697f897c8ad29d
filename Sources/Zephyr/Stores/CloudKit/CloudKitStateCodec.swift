import Foundation

/// The bytes of a ``CloudKitStoreState``: a magic word and version, the fields, and a
/// checksum of everything before it, so a damaged file reads as no state (and the store
/// starts over from a fetch) rather than as wrong state.
enum CloudKitStateCodec {
  private static let magic: UInt64 = 0x3154_5343_4b5a  // "ZKCST1", little-endian

  static func encode(_ state: CloudKitStoreState) -> Data {
    var bytes: [UInt8] = []
    LedgerCodec.appendWord(magic, to: &bytes)
    appendData(state.engineState, to: &bytes)
    LedgerCodec.appendWord(UInt64(state.server.count), to: &bytes)
    for (name, record) in state.server.sorted(by: { $0.key < $1.key }) {
      LedgerCodec.appendString(name, to: &bytes)
      LedgerCodec.appendString(record.key, to: &bytes)
      appendData(record.payload, to: &bytes)
      LedgerCodec.appendString(record.changeTag ?? "", to: &bytes)
      appendData(record.systemFields, to: &bytes)
    }
    LedgerCodec.appendWord(UInt64(state.pending.count), to: &bytes)
    for (name, change) in state.pending.sorted(by: { $0.value.sequence < $1.value.sequence }) {
      LedgerCodec.appendString(name, to: &bytes)
      LedgerCodec.appendString(change.key, to: &bytes)
      LedgerCodec.appendValue(change.value, to: &bytes)
      LedgerCodec.appendWord(change.sequence, to: &bytes)
    }
    LedgerCodec.appendWord(state.sequence, to: &bytes)
    let flags = [state.hasFetched, state.reportsAccountChange, state.needsZone, state.pausedAfterPurge]
    bytes.append(flags.enumerated().reduce(0) { $0 | ($1.element ? UInt8(1) << UInt8($1.offset) : 0) })
    LedgerCodec.appendWord((state.quotaRetryDate?.timeIntervalSince1970 ?? -1).bitPattern, to: &bytes)
    LedgerCodec.appendWord(state.quotaBackoff.bitPattern, to: &bytes)
    bytes.append(state.lastReset.map { resetCodes[$0.reason] ?? 0 } ?? 0)
    LedgerCodec.appendWord((state.lastReset?.date.timeIntervalSince1970 ?? 0).bitPattern, to: &bytes)
    LedgerCodec.appendWord(UInt64(state.generations.count), to: &bytes)
    for (name, generation) in state.generations.sorted(by: { $0.key < $1.key }) {
      LedgerCodec.appendString(name, to: &bytes)
      LedgerCodec.appendWord(generation, to: &bytes)
    }
    LedgerCodec.appendWord(LedgerCodec.checksum(bytes), to: &bytes)
    return Data(bytes)
  }

  static func decode(_ data: Data) throws(LedgerError) -> CloudKitStoreState {
    let all = [UInt8](data)
    guard all.count >= 16 else { throw LedgerError.corrupt("truncated") }
    var tail = ByteReader(bytes: all, position: all.count - 8)
    guard try tail.word() == LedgerCodec.checksum(all[..<(all.count - 8)]) else {
      throw LedgerError.corrupt("checksum")
    }
    var reader = ByteReader(bytes: Array(all[..<(all.count - 8)]), position: 0)
    guard try reader.word() == magic else { throw LedgerError.corrupt("not a CloudKit store state") }
    var state = CloudKitStoreState()
    state.engineState = try readData(from: &reader)
    for _ in 0..<(try count(from: &reader)) {
      let name = try reader.string()
      let key = try reader.string()
      let payload = try readData(from: &reader) ?? Data()
      let tag = try reader.string()
      let systemFields = try readData(from: &reader)
      state.server[name] = MirrorRecord(
        recordName: name, key: key, payload: payload, changeTag: tag.isEmpty ? nil : tag, systemFields: systemFields)
    }
    for _ in 0..<(try count(from: &reader)) {
      let name = try reader.string()
      let key = try reader.string()
      let value = try reader.value()
      state.pending[name] = CloudKitStoreState.Pending(key: key, value: value, sequence: try reader.word())
    }
    state.sequence = try reader.word()
    let flags = try reader.byte()
    state.hasFetched = flags & 1 != 0
    state.reportsAccountChange = flags & 2 != 0
    state.needsZone = flags & 4 != 0
    state.pausedAfterPurge = flags & 8 != 0
    let retry = Double(bitPattern: try reader.word())
    state.quotaRetryDate = retry < 0 ? nil : Date(timeIntervalSince1970: retry)
    state.quotaBackoff = Double(bitPattern: try reader.word())
    let resetCode = try reader.byte()
    let resetDate = Date(timeIntervalSince1970: Double(bitPattern: try reader.word()))
    if resetCode != 0 {
      guard let reason = resetCodes.first(where: { $0.value == resetCode })?.key else {
        throw LedgerError.corrupt("unknown reset")
      }
      state.lastReset = StoreReset(reason: reason, date: resetDate)
    }
    for _ in 0..<(try count(from: &reader)) {
      let name = try reader.string()
      state.generations[name] = try reader.word()
    }
    guard reader.isAtEnd else { throw LedgerError.corrupt("trailing bytes") }
    return state
  }

  /// A reset's reason as one byte (0: none).
  private static let resetCodes: [StoreReset.Reason: UInt8] = [.zoneDeleted: 1, .purged: 2, .encryptedDataReset: 3]

  private static func appendData(_ data: Data?, to bytes: inout [UInt8]) {
    guard let data else { return LedgerCodec.appendWord(UInt64.max, to: &bytes) }
    LedgerCodec.appendWord(UInt64(data.count), to: &bytes)
    bytes.append(contentsOf: data)
  }

  private static func readData(from reader: inout ByteReader) throws(LedgerError) -> Data? {
    let length = try reader.word()
    if length == UInt64.max { return nil }
    guard length <= UInt64(reader.bytes.count - reader.position) else { throw LedgerError.corrupt("truncated data") }
    let end = reader.position + Int(length)
    defer { reader.position = end }
    return Data(reader.bytes[reader.position..<end])
  }

  private static func count(from reader: inout ByteReader) throws(LedgerError) -> Int {
    let count = try reader.word()
    guard count <= UInt64(reader.bytes.count) else { throw LedgerError.corrupt("count") }
    return Int(count)
  }
}

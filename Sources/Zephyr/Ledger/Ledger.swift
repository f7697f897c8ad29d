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
  /// A first-format ledger's memory of a strategy key, read to be upgraded into ``state``
  /// at the key's next merge; never written.
  var memory: MergeMemory?

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

  init(stamp: Stamp, agreed: Agreed) {
    self.init(generation: stamp.generation, agreed: agreed, origin: stamp.origin)
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
  /// This device's Lamport clock: the highest generation it has written or read, on any
  /// key. Its next write is numbered above it, so a write made after seeing another
  /// device's write (of any key) is ordered after that device's earlier writes.
  var clock: UInt64 = 0
  /// This copy of the ledger's own id, new whenever the ledger starts over (a new
  /// domain, a lost, damaged or discarded file, an account change). Strategy keys number
  /// their writes under the device id and this (``EngineState/replicaID``), so a device
  /// that lost its history never writes under a name whose earlier writes it no longer
  /// knows of.
  var incarnation: String = EngineState.randomID(length: 4)

  subscript(key: String) -> LedgerEntry? {
    get { entries[key] }
    set { entries[key] = newValue }
  }
}

// MARK: - Binary encoding

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
    for (key, entry) in ledger.entries { appendRecord(key: key, entry: entry, to: &bytes) }
    return Data(bytes)
  }

  /// Records for changed entries (`nil`: the entry was removed) and the clock when it
  /// moved, to append to a file.
  static func journal(_ changes: [String: LedgerEntry?], clock: UInt64? = nil) -> Data {
    var bytes: [UInt8] = []
    if let clock { appendClock(clock, to: &bytes) }
    for (key, entry) in changes { appendRecord(key: key, entry: entry, to: &bytes) }
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
    // A file from before incarnations has none: the loader gives it a new one.
    ledger.incarnation = ""
    var records = 0
    var damagedTail = false
    while !reader.isAtEnd {
      guard let record = try? reader.record() else {
        damagedTail = true
        break
      }
      switch record {
      case .entry(let key, let entry):
        ledger[key] = entry
        records += 1
      case .clock(let clock):
        ledger.clock = max(ledger.clock, clock)
      case .incarnation(let incarnation):
        ledger.incarnation = incarnation
      }
    }
    // Files written before the clock existed (and a clock record lost with a damaged
    // tail) start from the highest generation the entries agreed on.
    ledger.clock = ledger.entries.values.reduce(ledger.clock) { max($0, $1.generation) }
    return (ledger, records, damagedTail)
  }

  /// A clock record: an empty key (no synced key is empty) and kind 3.
  private static func appendClock(_ clock: UInt64, to bytes: inout [UInt8]) {
    appendLedgerRecord(kind: 3, to: &bytes) { appendWord(clock, to: &$0) }
  }

  /// An incarnation record: an empty key and kind 4.
  private static func appendIncarnation(_ incarnation: String, to bytes: inout [UInt8]) {
    appendLedgerRecord(kind: 4, to: &bytes) { appendString(incarnation, to: &$0) }
  }

  /// A record of the ledger itself (not of a key): the empty key, `kind`, then `body`,
  /// framed and checksummed like every record.
  private static func appendLedgerRecord(kind: UInt8, to bytes: inout [UInt8], _ body: (inout [UInt8]) -> Void) {
    var payload: [UInt8] = []
    appendString("", to: &payload)
    payload.append(kind)
    body(&payload)
    appendWord(UInt64(payload.count), to: &bytes)
    bytes += payload
    appendWord(checksum(payload), to: &bytes)
  }

  private static func appendRecord(key: String, entry: LedgerEntry?, to bytes: inout [UInt8]) {
    var payload: [UInt8] = []
    appendString(key, to: &payload)
    switch entry?.agreed {
    case nil:
      payload.append(2)
    case .deleted?:
      payload.append(0)
      appendWord(entry?.generation ?? 0, to: &payload)
      appendString(entry?.origin ?? "", to: &payload)
    case .value(let fingerprint)?:
      payload.append(1)
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
      payload.append(5)
      appendState(state, to: &payload)
    }
    if let state = entry?.pendingPull?.previous?.state {
      payload.append(6)
      appendState(state, to: &payload)
    }
    appendWord(UInt64(payload.count), to: &bytes)
    bytes += payload
    appendWord(checksum(payload), to: &bytes)
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

  fileprivate static func checksum(_ bytes: some Sequence<UInt8>) -> UInt64 {
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

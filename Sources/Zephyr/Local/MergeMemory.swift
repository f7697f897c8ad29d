import Foundation

/// What a key merged by a ``MergeStrategy`` remembers of its agreed state beyond the
/// fingerprint: the writes it includes (a ``VersionVector``), those its record says it
/// includes, and what it is made of (``MergeData``), so that the next merge with the
/// store's state is exact.
///
/// A lost memory (a ledger from before this build, an entry taken from another process
/// on a shared suite, one restored after a crash) degrades to "the agreed write alone":
/// every element, entry and sibling counts as that write's. A merge then keeps what the
/// other side added and may bring back what it removed before; it never drops an added
/// element.
struct MergeMemory: Sendable, Equatable {
  /// Every write the agreed state includes.
  var versions: VersionVector
  /// The writes the agreed state's record says it includes: what it says again when
  /// published again. Fewer than ``versions`` after an adopt (the same value on both
  /// sides under the other side's stamp).
  var record: VersionVector
  /// What the agreed state is made of.
  var data: MergeData

  /// About how many bytes the memory takes in the ledger file.
  var estimatedBytes: Int {
    data.estimatedBytes + 16 * (versions.entries.count + record.entries.count)
  }
}

extension LedgerCodec {
  /// Appends a memory: marker 3, the versions, the record's, then the data. (Markers 1
  /// and 2 were earlier builds' memories, which a reader skips.)
  static func appendMemory(_ memory: MergeMemory, to bytes: inout [UInt8]) {
    bytes.append(3)
    appendVersions(memory.versions, to: &bytes)
    appendVersions(memory.record, to: &bytes)
    switch memory.data {
    case .siblings(let siblings):
      bytes.append(0)
      appendSiblings(siblings, to: &bytes)
    case .elements(let elements):
      bytes.append(1)
      appendWord(UInt64(elements.count), to: &bytes)
      for (fingerprint, stamps) in elements.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
        appendWord(fingerprint.rawValue, to: &bytes)
        appendWord(UInt64(stamps.count), to: &bytes)
        for stamp in stamps { appendStamp(stamp, to: &bytes) }
      }
    case .entries(let entries):
      bytes.append(2)
      appendWord(UInt64(entries.count), to: &bytes)
      for (key, siblings) in entries.sorted(by: { $0.key < $1.key }) {
        appendString(key, to: &bytes)
        appendSiblings(siblings, to: &bytes)
      }
    }
  }

  private static func appendSiblings(_ siblings: [MergeData.Sibling], to bytes: inout [UInt8]) {
    appendWord(UInt64(siblings.count), to: &bytes)
    for sibling in siblings {
      appendStamp(sibling.stamp, to: &bytes)
      appendValue(sibling.value, to: &bytes)
    }
  }

  private static func appendStamp(_ stamp: Stamp, to bytes: inout [UInt8]) {
    appendString(stamp.origin, to: &bytes)
    appendWord(stamp.generation, to: &bytes)
  }

  private static func appendVersions(_ versions: VersionVector, to bytes: inout [UInt8]) {
    let entries = versions.sortedEntries
    appendWord(UInt64(entries.count), to: &bytes)
    for entry in entries { appendStamp(Stamp(generation: entry.generation, origin: entry.origin), to: &bytes) }
  }

  /// A value as a one-element binary property list (a top-level scalar is not portable),
  /// or a 0 marker for none.
  static func appendValue(_ value: PropertyListValue?, to bytes: inout [UInt8]) {
    guard let value,
      let data = try? PropertyListSerialization.data(
        fromPropertyList: [value.foundationValue], format: .binary, options: 0)
    else {
      bytes.append(0)
      return
    }
    bytes.append(1)
    appendWord(UInt64(data.count), to: &bytes)
    bytes += [UInt8](data)
  }
}

extension ByteReader {
  /// The most parts a remembered state may list.
  private static let maximumParts: UInt64 = 1 << 20

  /// A memory written by ``LedgerCodec/appendMemory(_:to:)``; `nil` for an earlier
  /// build's, whose bytes are skipped (the key then merges as if it had no memory).
  mutating func memory() throws(LedgerError) -> MergeMemory? {
    let marker = try byte()
    guard marker == 3 else {
      guard marker == 1 || marker == 2 else { throw LedgerError.corrupt("unknown memory kind") }
      position = bytes.count
      return nil
    }
    let included = try versionVector()
    let record = try versionVector()
    let kind = try byte()
    let data: MergeData
    switch kind {
    case 0:
      data = .siblings(try siblings())
    case 1:
      var elements: [Fingerprint: [Stamp]] = [:]
      for _ in 0..<(try count()) {
        let fingerprint = Fingerprint(rawValue: try word())
        var stamps: [Stamp] = []
        for _ in 0..<(try count()) { stamps.append(try stamp()) }
        elements[fingerprint] = stamps
      }
      data = .elements(elements)
    case 2:
      var entries: [String: [MergeData.Sibling]] = [:]
      for _ in 0..<(try count()) {
        let key = try string()
        entries[key] = try siblings()
      }
      data = .entries(entries)
    default:
      throw LedgerError.corrupt("unknown merge data")
    }
    return MergeMemory(versions: included, record: record, data: data)
  }

  private mutating func count() throws(LedgerError) -> UInt64 {
    let count = try word()
    guard count <= Self.maximumParts else { throw LedgerError.corrupt("too many parts") }
    return count
  }

  private mutating func siblings() throws(LedgerError) -> [MergeData.Sibling] {
    var siblings: [MergeData.Sibling] = []
    for _ in 0..<(try count()) {
      let stamp = try stamp()
      siblings.append(MergeData.Sibling(stamp: stamp, value: try value()))
    }
    return siblings
  }

  private mutating func stamp() throws(LedgerError) -> Stamp {
    let origin = try string()
    let generation = try word()
    guard generation <= Generation.maximum else { throw LedgerError.corrupt("bad stamp") }
    return Stamp(generation: generation, origin: origin)
  }

  private mutating func versionVector() throws(LedgerError) -> VersionVector {
    let count = try word()
    guard count <= UInt64(SyncRecord.maximumHistoryEntries) + 1 else { throw LedgerError.corrupt("too many versions") }
    var versions = VersionVector()
    for _ in 0..<count { versions.include(try stamp()) }
    return versions
  }

  mutating func value() throws(LedgerError) -> PropertyListValue? {
    guard try byte() == 1 else { return nil }
    let length = try word()
    guard length <= UInt64(bytes.count - position) else { throw LedgerError.corrupt("truncated value") }
    let data = Data(bytes[position..<(position + Int(length))])
    position += Int(length)
    guard
      let decoded = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
      case .array(let items)? = PropertyListValue(bridging: decoded), items.count == 1
    else {
      throw LedgerError.corrupt("unreadable value")
    }
    return items[0]
  }
}

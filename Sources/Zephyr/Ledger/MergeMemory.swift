import Foundation

/// What a ledger of the first format remembered of a strategy key's agreed state: the
/// writes it included (a ``VersionVector``), those its record said it included, and what
/// it was made of (``MergeData``). Only read, from ledgers and shared agreements that
/// earlier builds wrote, to be upgraded into a ``ReplicaState`` at the key's next merge
/// (``ReplicaState/init(legacyMemory:local:kind:)``).
struct MergeMemory: Sendable, Equatable {
  /// Every write the agreed state includes.
  var versions: VersionVector
  /// The writes the agreed state's record says it includes: what it says again when
  /// published again. Fewer than ``versions`` after an adopt (the same value on both
  /// sides under the other side's stamp).
  var record: VersionVector
  /// What the agreed state is made of.
  var data: MergeData
}

extension ByteReader {
  /// The most parts a remembered state may list.
  private static let maximumParts: UInt64 = 1 << 20

  /// A memory an earlier build wrote (marker 3, the versions, the record's, then the
  /// data), read to be upgraded into a state; `nil` for an even earlier
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
}

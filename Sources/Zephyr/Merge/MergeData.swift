import Foundation

/// What a first-format (`z1`) record or ledger memory said a strategy key's state was
/// made of, beside its value: per part, the writes it came from (its *stamps*):
/// - `.max`, `.min`, `.custom`: the value's *siblings*, each with its write;
/// - `.set`, `.union`: per element, the writes that added it;
/// - `.dictionary`: per entry, its siblings (the latest is the entry's value).
///
/// Only read, from records and ledgers that earlier builds wrote, and upgraded into a
/// ``ReplicaState`` (see ``ReplicaState/init(legacy:kind:)``), whose groups are these
/// parts under these writes.
enum MergeData: Sendable, Equatable {
  case siblings([Sibling])
  /// Per element (by fingerprint), the writes that added it.
  case elements([Fingerprint: [Stamp]])
  /// Per entry, its siblings, oldest first.
  case entries([String: [Sibling]])

  /// One concurrent state: its write, and its value (`nil`: a delete).
  struct Sibling: Sendable, Equatable, Hashable {
    var stamp: Stamp
    var value: PropertyListValue?
  }

  /// Every write the data names.
  var stamps: [Stamp] {
    switch self {
    case .siblings(let siblings): siblings.map(\.stamp)
    case .elements(let elements): elements.values.flatMap { $0 }
    case .entries(let entries): entries.values.flatMap { $0.map(\.stamp) }
    }
  }

  var family: MergeFamily {
    switch self {
    case .siblings: .siblings
    case .elements: .elements
    case .entries: .entries
    }
  }
}

/// How a strategy merges: which ``MergeData`` its states carry.
enum MergeFamily: Sendable {
  case siblings, elements, entries
}

extension MergeStrategy {
  var mergeFamily: MergeFamily {
    switch self {
    case .set, .union: .elements
    case .dictionary: .entries
    case .lastWriterWins, .max, .min, .custom: .siblings
    }
  }
}

// MARK: In a record

extension MergeData {
  /// Reads a record's sixth field; a reason when it does not fit the record: stamps must
  /// name the record's origins and be included in its versions.
  static func decode(
    _ field: PropertyListValue, value: PropertyListValue?, origins: [String], versions: VersionVector
  ) -> Result<MergeData, MalformedData> {
    let decoder = StampDecoder(origins: origins, versions: versions)
    // The data's own shape tells its kind, whatever the value is (a `.custom` key's value
    // may be a dictionary, and carries siblings): element stamps are data; entry siblings
    // begin with their entry's key; siblings with a stamp.
    switch field {
    case .data(let bytes):
      guard value?.arrayItems != nil || value == nil,
        let elements = decoder.elements(bytes, items: value?.arrayItems ?? [])
      else {
        return .failure(MalformedData(reason: "record element stamps do not match its value"))
      }
      return .success(.elements(elements))
    case .array(let list):
      if case .array(let fields)? = list.first, case .string? = fields.first {
        guard let shown = value?.dictionaryEntries ?? (value == nil ? [:] : nil),
          let entries = decoder.entries(list, shown: shown)
        else {
          return .failure(MalformedData(reason: "record entry stamps do not match its value"))
        }
        return .success(.entries(entries))
      }
      guard let siblings = decoder.siblings(list) else {
        return .failure(MalformedData(reason: "record siblings are not stamps with values"))
      }
      return .success(.siblings(siblings))
    default:
      return .failure(MalformedData(reason: "record merge data is neither siblings nor stamps"))
    }
  }

  struct MalformedData: Error {
    var reason: String
  }
}

/// Reads the stamps of a record's merge data.
private struct StampDecoder {
  var origins: [String]
  var versions: VersionVector

  func stamp(_ index: PropertyListValue, _ generation: PropertyListValue) -> Stamp? {
    guard case .integer(let index) = index, case .integer(let generation) = generation, index >= 0 else { return nil }
    return stamp(UInt64(index), UInt64(max(generation, 0)))
  }

  func stamp(_ index: UInt64, _ generation: UInt64) -> Stamp? {
    guard index < UInt64(origins.count), generation >= 1 else { return nil }
    let stamp = Stamp(generation: generation, origin: origins[Int(index)])
    return versions.includes(stamp) ? stamp : nil
  }

  func siblings(_ list: [PropertyListValue]) -> [MergeData.Sibling]? {
    var siblings: [MergeData.Sibling] = []
    for entry in list {
      guard case .array(let fields) = entry, (2...3).contains(fields.count), let stamp = stamp(fields[0], fields[1])
      else { return nil }
      siblings.append(MergeData.Sibling(stamp: stamp, value: fields.count == 3 ? fields[2] : nil))
    }
    return siblings.isEmpty ? nil : siblings
  }

  func elements(_ bytes: Data, items: [PropertyListValue]) -> [Fingerprint: [Stamp]]? {
    guard let numbers = Varint.decode(bytes) else { return nil }
    var elements: [Fingerprint: [Stamp]] = [:]
    var position = 0
    for item in items {
      guard position < numbers.count, numbers[position] >= 1,
        numbers[position] <= UInt64(SyncRecord.maximumHistoryEntries) + 1
      else { return nil }
      let count = Int(numbers[position])
      position += 1
      guard position + 2 * count <= numbers.count else { return nil }
      for offset in 0..<count {
        guard let stamp = stamp(numbers[position + 2 * offset], numbers[position + 2 * offset + 1]) else { return nil }
        if !(elements[item.fingerprint] ?? []).contains(stamp) { elements[item.fingerprint, default: []].append(stamp) }
      }
      position += 2 * count
    }
    return position == numbers.count ? elements : nil
  }

  func entries(_ list: [PropertyListValue], shown: [String: PropertyListValue]) -> [String: [MergeData.Sibling]]? {
    var entries: [String: [MergeData.Sibling]] = [:]
    for entry in list {
      guard case .array(let fields) = entry, (3...4).contains(fields.count), case .string(let key) = fields[0],
        let stamp = stamp(fields[1], fields[2]), let value = fields.count == 4 ? fields[3] : shown[key]
      else { return nil }
      entries[key, default: []].append(MergeData.Sibling(stamp: stamp, value: value))
    }
    // Every entry shown is the latest of its siblings.
    for (key, value) in shown {
      guard let latest = entries[key]?.max(by: { $0.stamp < $1.stamp }), latest.value == value else { return nil }
    }
    return entries.keys.allSatisfy { shown[$0] != nil } ? entries : nil
  }
}

/// Unsigned LEB128: small numbers in one byte.
enum Varint {
  static func encode(_ numbers: [UInt64]) -> Data {
    var bytes: [UInt8] = []
    for number in numbers {
      var rest = number
      repeat {
        let low = UInt8(rest & 0x7F)
        rest >>= 7
        bytes.append(rest == 0 ? low : low | 0x80)
      } while rest != 0
    }
    return Data(bytes)
  }

  /// `nil` when the bytes end inside a number or a number overflows.
  static func decode(_ data: Data) -> [UInt64]? {
    var numbers: [UInt64] = []
    var current: UInt64 = 0
    var shift: UInt64 = 0
    for byte in data {
      guard shift < 64 else { return nil }
      current |= UInt64(byte & 0x7F) << shift
      if byte & 0x80 == 0 {
        numbers.append(current)
        (current, shift) = (0, 0)
      } else {
        shift += 7
      }
    }
    return shift == 0 ? numbers : nil
  }
}

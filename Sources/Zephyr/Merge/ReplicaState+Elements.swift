import Foundation

/// How a `.set`'s or a `.union`'s state is written in its record and in the ledger: the
/// writes once, as numbers, and every element's bytes once, in one `Data`, with no
/// property-list object per element.
///
/// Written as arrays of property lists, 300 starred articles cost 49.6 KB (a dictionary,
/// its keys and an object reference per field of each article), and compressed still
/// 3.4× their JSON. Here an article costs what its fields' bytes do, and a dictionary
/// key is written once for the whole state.
///
/// ```
/// <format 1> <count of writes> (<writer index> <generation rise> <count of parts>)…  <part>…
/// ```
///
/// - the writes, oldest first: the writer's index (into the state's writers), how far
///   its generation rises above the write before it, and how many parts it holds (none:
///   a presence mark, an empty collection written), as unsigned LEB128 numbers;
/// - then every write's parts, in order, each a kind byte and its payload (``ValueWriter``):
///   LEB128 lengths and counts, zigzag LEB128 integers, doubles as their 64-bit pattern
///   (little-endian), dates in whole seconds as zigzag LEB128 (else as a double). A
///   dictionary's keys, sorted, are each a LEB128 number: 0 for a key written here for
///   the first time (its UTF-8 length and bytes follow), else its position + 1 in the
///   list of keys written so far. A part that an earlier write holds too (added on two
///   devices at once) is a reference to it: its position among the distinct parts so far.
enum ElementMembership {
  /// The blob's first byte: its format.
  static let formatByte: UInt8 = 1

  /// The blob of `groups`, whose dots are `dots` (oldest first); `index` gives each
  /// writer's position in the state's writers.
  static func encode(dots: [Stamp], groups: [Stamp: [PropertyListValue]], index: [String: Int]) -> Data {
    var bytes: [UInt8] = [formatByte]
    Varint.append(UInt64(dots.count), to: &bytes)
    var previous: UInt64 = 0
    for dot in dots {
      Varint.append(UInt64(index[dot.origin] ?? 0), to: &bytes)
      Varint.append(dot.generation - previous, to: &bytes)
      Varint.append(UInt64(groups[dot]?.count ?? 0), to: &bytes)
      previous = dot.generation
    }
    var writer = ValueWriter()
    // (Distinct parts by position; a repeat is rare, so the table is built only once one
    // group has passed.)
    var seen: [PropertyListValue: Int] = [:]
    for (number, dot) in dots.enumerated() {
      for part in groups[dot] ?? [] {
        if number > 0, let position = seen[part] {
          writer.bytes.append(ValueTag.repeated.rawValue)
          Varint.append(UInt64(position), to: &writer.bytes)
          continue
        }
        if dots.count > 1 { seen[part] = seen.count }
        writer.append(part)
      }
    }
    bytes.append(contentsOf: writer.bytes)
    return Data(bytes)
  }

  /// The writes (writer index, generation) and the parts of each that `blob` holds; a
  /// reason when it is damaged.
  static func decode(_ blob: Data) -> Result<
    [(index: UInt64, generation: UInt64, parts: [PropertyListValue])], ReplicaDecodingError
  > {
    var reader = ValueReader(bytes: [UInt8](blob))
    do throws(ValueReader.Damage) {
      guard try reader.byte() == formatByte else { throw .init(reason: "has an unknown format") }
      let count = try reader.count()
      var writes: [(index: UInt64, generation: UInt64, count: Int)] = []
      var generation: UInt64 = 0
      for _ in 0..<count {
        let index = try reader.varint()
        let rise = try reader.varint()
        guard rise <= Generation.maximum - generation else { throw .init(reason: "has a generation out of range") }
        generation += rise
        writes.append((index, generation, try reader.count()))
      }
      var distinct: [PropertyListValue] = []
      var groups: [(index: UInt64, generation: UInt64, parts: [PropertyListValue])] = []
      for write in writes {
        var parts: [PropertyListValue] = []
        for _ in 0..<write.count {
          if reader.peek() == ValueTag.repeated.rawValue {
            _ = try reader.byte()
            let position = try reader.varint()
            guard position < distinct.count else { throw .init(reason: "repeats a part it lacks") }
            parts.append(distinct[Int(position)])
          } else {
            let part = try reader.value()
            distinct.append(part)
            parts.append(part)
          }
        }
        groups.append((write.index, write.generation, parts))
      }
      guard reader.isAtEnd else { throw .init(reason: "has bytes past its last part") }
      return .success(groups)
    } catch {
      return .failure(ReplicaDecodingError(reason: "element state \(error.reason)"))
    }
  }
}

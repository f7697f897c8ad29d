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
/// - then every write's parts, in order, each a kind byte and its payload (``ElementTag``):
///   LEB128 lengths and counts, zigzag LEB128 integers, doubles as their 64-bit pattern
///   (little-endian), dates in whole seconds as zigzag LEB128 (else as a double). A
///   dictionary's keys, sorted, are each a LEB128 number: 0 for a key written here for
///   the first time (its UTF-8 length and bytes follow), else its position + 1 in the
///   list of keys written so far. A part that an earlier write holds too (added on two
///   devices at once) is a reference to it: its position among the distinct parts so far.
enum ElementMembership {
  /// The blob's first byte: its format.
  static let formatByte: UInt8 = 1

  /// The deepest nesting an element may have; shallow enough that damaged bytes cannot
  /// exhaust the stack.
  static let maximumDepth = 32

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
    var writer = ElementWriter()
    // (Distinct parts by position; a repeat is rare, so the table is built only once one
    // group has passed.)
    var seen: [PropertyListValue: Int] = [:]
    for (number, dot) in dots.enumerated() {
      for part in groups[dot] ?? [] {
        if number > 0, let position = seen[part] {
          writer.bytes.append(ElementTag.repeated.rawValue)
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
    var reader = ElementReader(bytes: [UInt8](blob))
    do throws(ElementReader.Damage) {
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
          if reader.peek() == ElementTag.repeated.rawValue {
            _ = try reader.byte()
            let position = try reader.varint()
            guard position < distinct.count else { throw .init(reason: "repeats a part it lacks") }
            parts.append(distinct[Int(position)])
          } else {
            let part = try reader.value(depth: 0)
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

/// An element's kind byte in ``ElementMembership``'s blob.
enum ElementTag: UInt8 {
  case string = 0
  case integer = 1
  case unsignedInteger = 2
  case double = 3
  case falseValue = 4
  case trueValue = 5
  case date = 6
  case wholeSecondDate = 7
  case data = 8
  case array = 9
  case dictionary = 10
  /// A part an earlier write holds too.
  case repeated = 11
}

/// Writes elements, each dictionary key once.
private struct ElementWriter {
  var bytes: [UInt8] = []
  private var keys: [String: Int] = [:]

  mutating func append(_ value: PropertyListValue) {
    func tag(_ tag: ElementTag) { bytes.append(tag.rawValue) }
    switch value {
    case .string(let text):
      tag(.string)
      appendText(text)
    case .integer(let number):
      tag(.integer)
      Varint.append(UInt64(bitPattern: (number << 1) ^ (number >> 63)), to: &bytes)
    case .unsignedInteger(let number):
      tag(.unsignedInteger)
      Varint.append(number, to: &bytes)
    case .double(let number):
      tag(.double)
      appendWord(number.bitPattern)
    case .bool(let flag):
      tag(flag ? .trueValue : .falseValue)
    case .date(let date):
      let seconds = date.timeIntervalSinceReferenceDate
      if abs(seconds) < 0x1p53, let whole = Int64(exactly: seconds), Double(whole).bitPattern == seconds.bitPattern {
        tag(.wholeSecondDate)
        Varint.append(UInt64(bitPattern: (whole << 1) ^ (whole >> 63)), to: &bytes)
      } else {
        tag(.date)
        appendWord(seconds.bitPattern)
      }
    case .data(let data):
      tag(.data)
      Varint.append(UInt64(data.count), to: &bytes)
      bytes.append(contentsOf: data)
    case .array(let items):
      tag(.array)
      Varint.append(UInt64(items.count), to: &bytes)
      for item in items { append(item) }
    case .dictionary(let entries):
      tag(.dictionary)
      Varint.append(UInt64(entries.count), to: &bytes)
      for (key, item) in entries.sorted(by: { $0.key < $1.key }) {
        if let position = keys[key] {
          Varint.append(UInt64(position + 1), to: &bytes)
        } else {
          keys[key] = keys.count
          bytes.append(0)
          appendText(key)
        }
        append(item)
      }
    }
  }

  private mutating func appendText(_ text: String) {
    Varint.append(UInt64(text.utf8.count), to: &bytes)
    bytes.append(contentsOf: text.utf8)
  }

  private mutating func appendWord(_ word: UInt64) {
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
  }
}

/// Reads what ``ElementWriter`` wrote; every read is bounds-checked, so damaged bytes give
/// a reason, never a crash.
private struct ElementReader {
  struct Damage: Error {
    var reason: String
  }

  let bytes: [UInt8]
  private var position = 0
  private var keys: [String] = []

  init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  var isAtEnd: Bool { position == bytes.count }

  func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

  mutating func byte() throws(Damage) -> UInt8 {
    guard position < bytes.count else { throw Damage(reason: "is cut short") }
    defer { position += 1 }
    return bytes[position]
  }

  mutating func varint() throws(Damage) -> UInt64 {
    guard let number = Varint.read(bytes, at: &position) else {
      throw Damage(reason: "is cut short or has an overlong number")
    }
    return number
  }

  /// A count of things, each of which takes at least one byte.
  mutating func count() throws(Damage) -> Int {
    let count = try varint()
    guard count <= UInt64(bytes.count - position) else { throw Damage(reason: "counts more than it holds") }
    return Int(count)
  }

  private mutating func word() throws(Damage) -> UInt64 {
    guard bytes.count - position >= 8 else { throw Damage(reason: "is cut short") }
    var word: UInt64 = 0
    for offset in 0..<8 { word |= UInt64(bytes[position + offset]) << UInt64(offset * 8) }
    position += 8
    return word
  }

  private mutating func slice() throws(Damage) -> ArraySlice<UInt8> {
    let length = try count()
    defer { position += length }
    return bytes[position..<(position + length)]
  }

  private mutating func zigzag() throws(Damage) -> Int64 {
    let zigzag = try varint()
    return Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
  }

  mutating func value(depth: Int) throws(Damage) -> PropertyListValue {
    guard depth < ElementMembership.maximumDepth else { throw Damage(reason: "nests too deeply") }
    guard let tag = ElementTag(rawValue: try byte()), tag != .repeated else {
      throw Damage(reason: "has an unknown kind of part")
    }
    switch tag {
    case .string: return .string(String(decoding: try slice(), as: UTF8.self))
    case .integer: return .integer(try zigzag())
    case .unsignedInteger: return .unsignedInteger(try varint())
    case .double: return .double(Double(bitPattern: try word()))
    case .falseValue: return .bool(false)
    case .trueValue: return .bool(true)
    case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try word())))
    case .wholeSecondDate: return .date(Date(timeIntervalSinceReferenceDate: Double(try zigzag())))
    case .data: return .data(Data(try slice()))
    case .array:
      var items: [PropertyListValue] = []
      for _ in 0..<(try count()) { items.append(try value(depth: depth + 1)) }
      return .array(items)
    case .dictionary:
      var entries: [String: PropertyListValue] = [:]
      for _ in 0..<(try count()) {
        let key = try dictionaryKey()
        guard entries[key] == nil else { throw Damage(reason: "repeats a dictionary key") }
        entries[key] = try value(depth: depth + 1)
      }
      return .dictionary(entries)
    case .repeated: throw Damage(reason: "has an unknown kind of part")
    }
  }

  private mutating func dictionaryKey() throws(Damage) -> String {
    let reference = try varint()
    if reference == 0 {
      let key = String(decoding: try slice(), as: UTF8.self)
      keys.append(key)
      return key
    }
    guard reference <= UInt64(keys.count) else { throw Damage(reason: "names a dictionary key it lacks") }
    return keys[Int(reference - 1)]
  }
}

import Foundation

/// A value's kind byte (see ``ValueWriter``).
enum ValueTag: UInt8 {
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

/// Writes property-list values compactly, as the ledger and a collection's state (see
/// ``ElementMembership``) keep them: a kind byte (``ValueTag``), then LEB128 lengths and
/// counts, zigzag LEB128 integers, doubles as their 64-bit pattern (little-endian), dates
/// in whole seconds as zigzag LEB128 (else as a double), and each dictionary key, sorted,
/// as a LEB128 number: 0 for a key written here for the first time (its UTF-8 length and
/// bytes follow), else its position + 1 among the keys written so far. Values read back
/// exactly (a date to the bit).
struct ValueWriter {
  var bytes: [UInt8] = []
  private var keys: [String: Int] = [:]

  mutating func append(_ value: PropertyListValue) {
    func tag(_ tag: ValueTag) { bytes.append(tag.rawValue) }
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
    LedgerCodec.appendWord(word, to: &bytes)
  }
}

/// Reads what ``ValueWriter`` wrote; every read is bounds-checked, so damaged bytes give a
/// reason, never a crash.
struct ValueReader {
  struct Damage: Error {
    var reason: String
  }

  /// The deepest nesting a value may have: far past any state Zephyr writes (five
  /// levels), and shallow enough that damaged bytes cannot exhaust the stack.
  static let maximumDepth = 64

  let bytes: [UInt8]
  private(set) var position: Int
  private var keys: [String] = []

  init(bytes: [UInt8], position: Int = 0) {
    self.bytes = bytes
    self.position = position
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

  mutating func value(depth: Int = 0) throws(Damage) -> PropertyListValue {
    guard depth < Self.maximumDepth else { throw Damage(reason: "nests too deeply") }
    guard let tag = ValueTag(rawValue: try byte()), tag != .repeated else {
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

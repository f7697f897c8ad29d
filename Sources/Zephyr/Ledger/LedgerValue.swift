import Foundation

/// How the ledger writes a property-list value (a strategy key's merge state above all):
/// a marker byte, then the value.
///
/// - 0: no value.
/// - 2: the ledger's own encoding: a kind byte, then the payload (LEB128 lengths and
///   counts, zigzag LEB128 integers, doubles and dates as their 64-bit patterns), so a
///   value reads back exactly (a date to the bit) and a 60 KB `Data` is copied once, not
///   bridged through `NSData` byte by byte as swift-corelibs-foundation's
///   `PropertyListSerialization` does.
private enum LedgerValueKind: UInt8 {
  case string = 0
  case integer = 1
  case unsignedInteger = 2
  case double = 3
  case falseValue = 4
  case trueValue = 5
  case date = 6
  case data = 7
  case array = 8
  case dictionary = 9
}

extension LedgerCodec {
  /// Appends `value` behind its marker (0 for none).
  static func appendValue(_ value: PropertyListValue?, to bytes: inout [UInt8]) {
    guard let value else {
      bytes.append(0)
      return
    }
    bytes.append(2)
    appendNative(value, to: &bytes)
  }

  private static func appendNative(_ value: PropertyListValue, to bytes: inout [UInt8]) {
    func kind(_ kind: LedgerValueKind) { bytes.append(kind.rawValue) }
    switch value {
    case .string(let text):
      kind(.string)
      Varint.append(UInt64(text.utf8.count), to: &bytes)
      bytes.append(contentsOf: text.utf8)
    case .integer(let number):
      kind(.integer)
      Varint.append(UInt64(bitPattern: (number << 1) ^ (number >> 63)), to: &bytes)
    case .unsignedInteger(let number):
      kind(.unsignedInteger)
      Varint.append(number, to: &bytes)
    case .double(let number):
      kind(.double)
      appendWord(number.bitPattern, to: &bytes)
    case .bool(let flag):
      kind(flag ? .trueValue : .falseValue)
    case .date(let date):
      kind(.date)
      appendWord(date.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
    case .data(let data):
      kind(.data)
      Varint.append(UInt64(data.count), to: &bytes)
      bytes.append(contentsOf: data)
    case .array(let items):
      kind(.array)
      Varint.append(UInt64(items.count), to: &bytes)
      for item in items { appendNative(item, to: &bytes) }
    case .dictionary(let entries):
      kind(.dictionary)
      Varint.append(UInt64(entries.count), to: &bytes)
      for (key, item) in entries.sorted(by: { $0.key < $1.key }) {
        Varint.append(UInt64(key.utf8.count), to: &bytes)
        bytes.append(contentsOf: key.utf8)
        appendNative(item, to: &bytes)
      }
    }
  }
}

extension ByteReader {
  /// The deepest nesting a value may have: far past any state Zephyr writes (five
  /// levels), and shallow enough that a damaged file cannot exhaust the stack.
  private static let maximumValueDepth = 64

  /// A value written by ``LedgerCodec/appendValue(_:to:)``; `nil` for none. Throws on any
  /// damage.
  mutating func value() throws(LedgerError) -> PropertyListValue? {
    switch try byte() {
    case 0: return nil
    case 2: return try nativeValue(depth: 0)
    default: throw LedgerError.corrupt("unknown value marker")
    }
  }

  private mutating func nativeValue(depth: Int) throws(LedgerError) -> PropertyListValue {
    guard depth < Self.maximumValueDepth else { throw LedgerError.corrupt("value nested too deeply") }
    guard let kind = LedgerValueKind(rawValue: try byte()) else { throw LedgerError.corrupt("unknown value kind") }
    switch kind {
    case .string: return .string(String(decoding: try slice(), as: UTF8.self))
    case .integer:
      let zigzag = try varint()
      return .integer(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
    case .unsignedInteger: return .unsignedInteger(try varint())
    case .double: return .double(Double(bitPattern: try word()))
    case .falseValue: return .bool(false)
    case .trueValue: return .bool(true)
    case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try word())))
    case .data: return .data(Data(try slice()))
    case .array:
      var items: [PropertyListValue] = []
      for _ in 0..<(try elementCount()) { items.append(try nativeValue(depth: depth + 1)) }
      return .array(items)
    case .dictionary:
      var entries: [String: PropertyListValue] = [:]
      for _ in 0..<(try elementCount()) {
        let key = String(decoding: try slice(), as: UTF8.self)
        entries[key] = try nativeValue(depth: depth + 1)
      }
      return .dictionary(entries)
    }
  }

  /// A length-prefixed run of bytes.
  private mutating func slice() throws(LedgerError) -> ArraySlice<UInt8> {
    let length = try varint()
    guard length <= UInt64(bytes.count - position) else { throw LedgerError.corrupt("truncated value") }
    defer { position += Int(length) }
    return bytes[position..<(position + Int(length))]
  }

  /// A count of elements, each of which takes at least one byte.
  private mutating func elementCount() throws(LedgerError) -> Int {
    let count = try varint()
    guard count <= UInt64(bytes.count - position) else { throw LedgerError.corrupt("truncated value") }
    return Int(count)
  }

  /// An unsigned LEB128 varint, read as packed blobs read theirs (at most 10 bytes, no
  /// overflow).
  private mutating func varint() throws(LedgerError) -> UInt64 {
    guard let number = Varint.read(bytes, at: &position) else {
      throw LedgerError.corrupt("truncated or overlong integer")
    }
    return number
  }
}

import Foundation

/// Decodes a `Decodable` value straight from a ``PropertyListValue``: what
/// ``PropertyListValueEncoder`` writes, and what `PropertyListEncoder` wrote (earlier
/// builds stored values that way), accepting exactly what `PropertyListDecoder` accepts:
/// a number decodes as any integer type that holds it exactly, a floating-point type
/// that holds it exactly (an integer: rounded to the nearest), a `Bool` only from a
/// Boolean; `"$null"` is `nil`, and a value nowhere else (`DecodingError.valueNotFound`);
/// anything else of the wrong kind throws `DecodingError.typeMismatch`, a missing key
/// `DecodingError.keyNotFound`.
enum PropertyListValueDecoder {
  static func decode<Value: Decodable>(_ type: Value.Type, from value: PropertyListValue) throws -> Value {
    try NodeDecoder(value: value, codingPath: []).decoded(type)
  }
}

private struct NodeDecoder: Decoder {
  let value: PropertyListValue
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .dictionary(let entries) = value else { throw mismatch([String: Any].self) }
    return KeyedDecodingContainer(KeyedNodeDecodingContainer<Key>(entries: entries, codingPath: codingPath))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard case .array(let items) = value else { throw mismatch([Any].self) }
    return UnkeyedNodeDecodingContainer(items: items, codingPath: codingPath)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

  /// `Date` and `Data` as themselves, anything else by its own `init(from:)`.
  func decoded<Value: Decodable>(_ type: Value.Type) throws -> Value {
    if type == Date.self {
      guard case .date(let date) = value, let date = date as? Value else { throw mismatch(type) }
      return date
    }
    if type == Data.self {
      guard case .data(let data) = value, let data = data as? Value else { throw mismatch(type) }
      return data
    }
    return try Value(from: self)
  }

  func mismatch(_ type: Any.Type) -> DecodingError {
    DecodingError.typeMismatch(
      type, DecodingError.Context(codingPath: codingPath, debugDescription: "found \(value.kindName) instead"))
  }

  var isNull: Bool { value == .string(PropertyListValueEncoder.null) }

  func integer<Integer: FixedWidthInteger>(_ type: Integer.Type) throws -> Integer {
    let exact: Integer? =
      switch value {
      case .integer(let number): Integer(exactly: number)
      case .unsignedInteger(let number): Integer(exactly: number)
      case .double(let number): Integer(exactly: number)
      default: nil
      }
    guard let exact else { throw mismatch(type) }
    return exact
  }

  func floatingPoint<Number: BinaryFloatingPoint>(_ type: Number.Type) throws -> Number {
    let exact: Number? =
      switch value {
      case .double(let number) where number.isNaN: Number.nan
      case .double(let number): Number(exactly: number)
      // (An integer becomes the nearest floating-point number, as Foundation rounds it.)
      case .integer(let number): Number(number)
      case .unsignedInteger(let number): Number(number)
      default: nil
      }
    guard let exact else { throw mismatch(type) }
    return exact
  }

  /// Throws `valueNotFound` for `"$null"`, which only an optional reads.
  func requireValue(_ type: Any.Type) throws {
    guard isNull else { return }
    throw DecodingError.valueNotFound(
      type, DecodingError.Context(codingPath: codingPath, debugDescription: "found null instead of a value"))
  }
}

extension NodeDecoder: SingleValueDecodingContainer {
  func decodeNil() -> Bool { isNull }
  func decode(_ type: Bool.Type) throws -> Bool {
    guard case .bool(let flag) = value else { throw mismatch(type) }
    return flag
  }
  func decode(_ type: String.Type) throws -> String {
    try requireValue(type)
    guard case .string(let text) = value else { throw mismatch(type) }
    return text
  }
  func decode(_ type: Double.Type) throws -> Double { try floatingPoint(type) }
  func decode(_ type: Float.Type) throws -> Float { try floatingPoint(type) }
  func decode(_ type: Int.Type) throws -> Int { try integer(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
  func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try decoded(type) }
}

private struct KeyedNodeDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let entries: [String: PropertyListValue]
  let codingPath: [any CodingKey]

  var allKeys: [Key] { entries.keys.compactMap(Key.init(stringValue:)) }

  func contains(_ key: Key) -> Bool { entries[key.stringValue] != nil }

  private func child(_ key: Key) throws -> NodeDecoder {
    guard let value = entries[key.stringValue] else {
      throw DecodingError.keyNotFound(
        key, DecodingError.Context(codingPath: codingPath, debugDescription: "no value for \"\(key.stringValue)\""))
    }
    return NodeDecoder(value: value, codingPath: codingPath + [key])
  }

  func decodeNil(forKey key: Key) throws -> Bool { try child(key).isNull }
  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).decode(type) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).decode(type) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).decode(type) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).decode(type) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).decode(type) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).decode(type) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).decode(type) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).decode(type) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).decode(type) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).decode(type) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).decode(type) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).decode(type) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).decode(type) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).decode(type) }
  func decode<Value: Decodable>(_ type: Value.Type, forKey key: Key) throws -> Value { try child(key).decoded(type) }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try child(key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try child(key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    guard let value = entries["super"] else {
      throw DecodingError.keyNotFound(
        SuperKey.key, DecodingError.Context(codingPath: codingPath, debugDescription: "no value for \"super\""))
    }
    return NodeDecoder(value: value, codingPath: codingPath + [SuperKey.key])
  }

  /// A decoder of `key`'s value, or of null when the key is missing (an optional then
  /// reads `nil`), as `PropertyListDecoder` gives.
  func superDecoder(forKey key: Key) throws -> any Decoder {
    NodeDecoder(
      value: entries[key.stringValue] ?? .string(PropertyListValueEncoder.null), codingPath: codingPath + [key])
  }
}

private struct UnkeyedNodeDecodingContainer: UnkeyedDecodingContainer {
  let items: [PropertyListValue]
  let codingPath: [any CodingKey]
  var currentIndex = 0

  init(items: [PropertyListValue], codingPath: [any CodingKey]) {
    self.items = items
    self.codingPath = codingPath
  }

  var count: Int? { items.count }
  var isAtEnd: Bool { currentIndex >= items.count }

  /// The next element, the index moved past it only when `body` succeeds.
  private mutating func next<Value>(_ type: Any.Type, _ body: (NodeDecoder) throws -> Value) throws -> Value {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type, DecodingError.Context(codingPath: codingPath, debugDescription: "the array has no more elements"))
    }
    let decoded = try body(
      NodeDecoder(value: items[currentIndex], codingPath: codingPath + [SuperKey(index: currentIndex)]))
    currentIndex += 1
    return decoded
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        Any?.self, DecodingError.Context(codingPath: codingPath, debugDescription: "the array has no more elements"))
    }
    guard items[currentIndex] == .string(PropertyListValueEncoder.null) else { return false }
    currentIndex += 1
    return true
  }
  mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.decode(type) } }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.decode(type) } }
  mutating func decode<Value: Decodable>(_ type: Value.Type) throws -> Value { try next(type) { try $0.decoded(type) } }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try next(type) { try $0.container(keyedBy: type) }
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try next([Any].self) { try $0.unkeyedContainer() }
  }

  mutating func superDecoder() throws -> any Decoder { try next((any Decoder).self) { $0 } }
}

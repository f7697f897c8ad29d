import Foundation

extension SyncValue where Self: RawRepresentable, RawValue: SyncValue {
  /// The value whose raw value `propertyList` decodes to; `nil` for a raw value of
  /// another type or one that names no value (an enum case removed since it was stored).
  public init?(propertyList: PropertyListValue) {
    guard let raw = RawValue(propertyList: propertyList) else { return nil }
    self.init(rawValue: raw)
  }

  /// The raw value's stored form: `Theme.dark` is stored as `"dark"`, as `@AppStorage`
  /// stores it.
  public var propertyList: PropertyListValue? {
    get throws { try rawValue.propertyList }
  }
}

extension SyncValue where Self: Codable {
  /// The value `PropertyListDecoder` decodes from `propertyList`; `nil` when it does not
  /// decode (the wrong type, or a shape the type no longer has).
  public init?(propertyList: PropertyListValue) {
    guard let value = CodableStorage.decode(Self.self, from: propertyList) else { return nil }
    self = value
  }

  /// The property list `PropertyListEncoder` makes of the value (a struct is a
  /// dictionary of its fields). Throws the encoder's error when the value cannot be
  /// encoded: a typed write of it is then refused, and never taken for a removal.
  public var propertyList: PropertyListValue? {
    get throws { try CodableStorage.encode(self) }
  }
}

extension SyncValue where Self: RawRepresentable & Codable, RawValue: SyncValue {
  /// A type that is both `RawRepresentable` and `Codable` is stored as its raw value,
  /// the form `@AppStorage` reads; see ``SyncValue``.
  public init?(propertyList: PropertyListValue) {
    guard let raw = RawValue(propertyList: propertyList) else { return nil }
    self.init(rawValue: raw)
  }

  /// The raw value's stored form.
  public var propertyList: PropertyListValue? {
    get throws { try rawValue.propertyList }
  }
}

/// Converts `Codable` values to and from ``PropertyListValue`` through Foundation's
/// property-list coders.
enum CodableStorage {
  /// The value's property list. Encoded inside a one-element array, because
  /// `PropertyListEncoder` refuses a top-level value that is not a container (a type
  /// that encodes itself as a single number or string). Throws the encoder's error, or
  /// an `EncodingError` when the value encodes to nothing (a type that encodes no
  /// container at all).
  static func encode<Value: Encodable>(_ value: Value) throws -> PropertyListValue {
    let encoder = PropertyListEncoder()
    encoder.outputFormat = .binary
    let data = try encoder.encode([value])
    let decoded = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
    guard case .array(let items)? = PropertyListValue(bridging: decoded), items.count == 1 else {
      throw EncodingError.invalidValue(
        value, EncodingError.Context(codingPath: [], debugDescription: "encoded to no property-list value"))
    }
    return items[0]
  }

  /// The value decoded from `propertyList`, wrapped as ``encode(_:)`` wraps it.
  static func decode<Value: Decodable>(_ type: Value.Type, from propertyList: PropertyListValue) -> Value? {
    let wrapped = PropertyListValue.array([propertyList]).foundationValue
    guard let data = try? PropertyListSerialization.data(fromPropertyList: wrapped, format: .binary, options: 0),
      let values = try? PropertyListDecoder().decode([Value].self, from: data)
    else { return nil }
    return values.first
  }
}

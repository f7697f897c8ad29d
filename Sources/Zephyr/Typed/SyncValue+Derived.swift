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
  /// The value decoded from `propertyList`, as `PropertyListDecoder` decodes it; `nil`
  /// when it does not decode (the wrong type, or a shape the type no longer has).
  public init?(propertyList: PropertyListValue) {
    guard let value = CodableStorage.decode(Self.self, from: propertyList) else { return nil }
    self = value
  }

  /// The property list `PropertyListEncoder` makes of the value (a struct is a
  /// dictionary of its fields), built directly rather than through a serialized plist.
  /// Throws what the value's `encode(to:)` throws: a typed write of it is then refused,
  /// and never taken for a removal.
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

/// Converts `Codable` values to and from ``PropertyListValue`` directly, shaped as
/// Foundation's property-list coders shape them.
enum CodableStorage {
  /// The value's property list, as `PropertyListEncoder` shapes it (see
  /// ``PropertyListValueEncoder``). Throws what the value's `encode(to:)` throws.
  static func encode<Value: Encodable>(_ value: Value) throws -> PropertyListValue {
    try PropertyListValueEncoder.encode(value)
  }

  /// The value decoded from `propertyList`; `nil` when it does not decode.
  static func decode<Value: Decodable>(_ type: Value.Type, from propertyList: PropertyListValue) -> Value? {
    try? PropertyListValueDecoder.decode(type, from: propertyList)
  }
}

import Foundation

extension Array: SyncValue where Element: SyncValue {
  /// An array whose every element decodes as `Element`; an array holding any other
  /// element is the wrong type.
  public init?(propertyList: PropertyListValue) {
    guard case .array(let items) = propertyList else { return nil }
    var elements: [Element] = []
    elements.reserveCapacity(items.count)
    for item in items {
      guard let element = Element(propertyList: item) else { return nil }
      elements.append(element)
    }
    self = elements
  }

  /// The elements' stored forms, in order. A `nil` element (in `[String?]`, say) is left
  /// out: property lists hold no null.
  public var propertyList: PropertyListValue? { .array(compactMap(\.propertyList)) }
}

extension Dictionary: SyncValue where Key == String, Value: SyncValue {
  /// A dictionary whose every value decodes as `Value`.
  public init?(propertyList: PropertyListValue) {
    guard case .dictionary(let entries) = propertyList else { return nil }
    var values: [String: Value] = [:]
    values.reserveCapacity(entries.count)
    for (key, item) in entries {
      guard let value = Value(propertyList: item) else { return nil }
      values[key] = value
    }
    self = values
  }

  /// The values' stored forms. A `nil` value (in `[String: Int?]`, say) is left out:
  /// property lists hold no null.
  public var propertyList: PropertyListValue? { .dictionary(compactMapValues(\.propertyList)) }
}

extension Optional: SyncValue where Wrapped: SyncValue {
  /// The wrapped value; `nil` when `propertyList` is not a `Wrapped` (the wrong type).
  /// An absent key never gets here: it reads as the key's default.
  public init?(propertyList: PropertyListValue) {
    guard let wrapped = Wrapped(propertyList: propertyList) else { return nil }
    self = .some(wrapped)
  }

  /// The wrapped value's stored form, or `nil`: writing `nil` removes the key, and the
  /// delete syncs as a tombstone.
  public var propertyList: PropertyListValue? { self?.propertyList ?? nil }
}

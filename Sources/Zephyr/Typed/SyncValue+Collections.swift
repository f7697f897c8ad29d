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
  /// out: property lists hold no null. Throws when an element cannot be encoded.
  public var propertyList: PropertyListValue? {
    get throws {
      var items: [PropertyListValue] = []
      items.reserveCapacity(count)
      for element in self {
        if let item = try element.propertyList { items.append(item) }
      }
      return .array(items)
    }
  }
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
  /// property lists hold no null. Throws when a value cannot be encoded.
  public var propertyList: PropertyListValue? {
    get throws {
      var entries: [String: PropertyListValue] = [:]
      entries.reserveCapacity(count)
      // Keys in order: which error a dictionary of unencodable values throws does not
      // depend on hash order.
      for key in keys.sorted() {
        if let value = self[key], let item = try value.propertyList { entries[key] = item }
      }
      return .dictionary(entries)
    }
  }
}

extension Optional: SyncValue where Wrapped: SyncValue {
  /// The wrapped value; `nil` when `propertyList` is not a `Wrapped` (the wrong type).
  /// An absent key never gets here: it reads as the key's default.
  public init?(propertyList: PropertyListValue) {
    guard let wrapped = Wrapped(propertyList: propertyList) else { return nil }
    self = .some(wrapped)
  }

  /// The wrapped value's stored form, or `nil`: writing `nil` removes the key, and the
  /// delete syncs as a tombstone. Throws when the wrapped value cannot be encoded (it is
  /// then no removal).
  public var propertyList: PropertyListValue? {
    get throws {
      switch self {
      case .none: return nil
      case .some(let wrapped): return try wrapped.propertyList
      }
    }
  }
}

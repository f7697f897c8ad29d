import Foundation

extension Set: SyncValue where Element: SyncValue {
  /// A set of the array's elements, when every element decodes as `Element` (repeats
  /// collapse); an array holding any other element is the wrong type.
  public init?(propertyList: PropertyListValue) {
    guard let elements = [Element](propertyList: propertyList) else { return nil }
    self.init(elements)
  }

  /// The elements' stored forms as an array, in an order every device computes alike
  /// (by the stored form's fingerprint), so the same set is always the same array.
  /// Throws when an element cannot be encoded.
  public var propertyList: PropertyListValue? {
    get throws {
      guard case .array(let items)? = try Array(self).propertyList else { return nil }
      return .array(items.map { ($0.fingerprint.rawValue, $0) }.sorted { $0.0 < $1.0 }.map(\.1))
    }
  }
}

extension Set: SetSyncValue where Element: SyncValue {
  /// A set's elements.
  public typealias SetElement = Element

  /// Inserts every element.
  public mutating func insertElements(_ elements: some Sequence<Element>) {
    formUnion(elements)
  }

  /// Removes every element.
  public mutating func removeElements(_ elements: some Sequence<Element>) {
    subtract(elements)
  }
}

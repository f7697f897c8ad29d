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
      // (Equal fingerprints, a collision or dates alike to the second on Linux, by description.)
      let keyed: [(fingerprint: UInt64, item: PropertyListValue)] = items.map { ($0.fingerprint.rawValue, $0) }
      let sorted = keyed.sorted { lhs, rhs in
        lhs.fingerprint != rhs.fingerprint
          ? lhs.fingerprint < rhs.fingerprint : lhs.item.logDescription < rhs.item.logDescription
      }
      return .array(sorted.map(\.item))
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

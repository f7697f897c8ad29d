@testable import Zephyr

/// Array values of strategy tests, written and read as sets of elements.
extension PropertyListValue {
  /// An array of strings.
  static func strings(_ items: String...) -> PropertyListValue { .array(items.map { .string($0) }) }

  /// The elements of an array value, as a set; `nil` for anything else.
  static func elements(of value: PropertyListValue?) -> Set<PropertyListValue>? {
    if case .array(let items)? = value { return Set(items) }
    return nil
  }
}

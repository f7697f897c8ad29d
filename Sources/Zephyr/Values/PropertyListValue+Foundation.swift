import Foundation

extension PropertyListValue {
  /// Bridges a value that Foundation handed back (`UserDefaults`, the iCloud store,
  /// `PropertyListSerialization`) into a ``PropertyListValue``.
  ///
  /// Accepts native Swift values, their Objective-C counterparts (`NSNumber`, `NSString`,
  /// `NSDate`, `NSData`, `NSArray`, `NSDictionary`), and values boxed in `Optional<Any>`
  /// at any depth, as swift-corelibs-foundation returns them from
  /// `persistentDomain(forName:)`. A `URL` becomes the string Foundation would persist.
  ///
  /// - Returns: `nil` when the value, or anything nested in it, is not a property-list
  ///   type (or is a dictionary with non-string keys, or is `nil`).
  public init?(bridging value: Any) {
    guard let unwrapped = Self.unwrapOptionals(value) else { return nil }
    switch unwrapped {
    case let text as String: self = .string(text)
    case let flag as Bool where type(of: unwrapped) == Bool.self: self = .bool(flag)
    case let number as Int where type(of: unwrapped) == Int.self: self = .integer(Int64(number))
    case let number as Int64 where type(of: unwrapped) == Int64.self: self = .integer(number)
    case let number as Double where type(of: unwrapped) == Double.self: self = .double(number)
    case let date as Date: self = .date(date)
    case let data as Data: self = .data(data)
    case let url as URL: self = .string(url.isFileURL ? url.path : url.absoluteString)
    case let number as NSNumber: self = Self.bridging(number)
    case let array as [Any]:
      var items: [PropertyListValue] = []
      items.reserveCapacity(array.count)
      for element in array {
        guard let item = PropertyListValue(bridging: element) else { return nil }
        items.append(item)
      }
      self = .array(items)
    case let dictionary as [AnyHashable: Any]:
      var entries: [String: PropertyListValue] = [:]
      entries.reserveCapacity(dictionary.count)
      for (key, element) in dictionary {
        guard let name = key.base as? String, let item = PropertyListValue(bridging: element)
        else { return nil }
        entries[name] = item
      }
      self = .dictionary(entries)
    default:
      return nil
    }
  }

  /// The value as Foundation stores it: `String`, `Int`, `UInt64`, `Double`, `Bool`,
  /// `Date`, `Data`, `[Any]` or `[String: Any]`, ready for `UserDefaults.set(_:forKey:)`
  /// or `NSUbiquitousKeyValueStore.set(_:forKey:)`.
  public var foundationValue: Any {
    switch self {
    case .string(let value): value
    case .integer(let value): Int(value)
    case .unsignedInteger(let value): value
    case .double(let value): value
    case .bool(let value): value
    case .date(let value): value
    case .data(let value): value
    case .array(let value): value.map(\.foundationValue)
    case .dictionary(let value): value.mapValues(\.foundationValue)
    }
  }

  private static func bridging(_ number: NSNumber) -> PropertyListValue {
    switch String(cString: number.objCType) {
    case "c", "B": return .bool(number.boolValue)
    case "f", "d": return .double(number.doubleValue)
    case "Q", "L", "I", "S", "C":
      let value = number.uint64Value
      return value > UInt64(Int64.max) ? .unsignedInteger(value) : .integer(Int64(value))
    default: return .integer(number.int64Value)
    }
  }

  /// Strips `Optional` boxes, however deep; `nil` for an empty box.
  package static func unwrapOptionals(_ value: Any) -> Any? {
    var current = value
    while let box = current as? any OptionalBox {
      guard let inner = box.wrappedValue else { return nil }
      current = inner
    }
    return current
  }
}

private protocol OptionalBox {
  var wrappedValue: Any? { get }
}

extension Optional: OptionalBox {
  fileprivate var wrappedValue: Any? { map { $0 as Any } }
}

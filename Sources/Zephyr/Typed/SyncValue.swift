import Foundation

/// A type whose values a ``SyncKey`` can store in `UserDefaults` and sync.
///
/// Bool, Int, Double, String, Date and Data conform, and so do arrays, `[String: …]`
/// dictionaries and optionals of conforming types. Your own `Codable` or
/// `RawRepresentable` types conform by declaring it, with no body:
///
/// ```swift
/// enum Theme: String, SyncValue { case light, dark }          // stored as "dark"
/// struct Layout: Codable, SyncValue { var columns = 2 }        // stored as ["columns": 2]
/// ```
///
/// How each kind is stored in `UserDefaults` (and, inside its record, in the store):
///
/// | Type | Stored as |
/// |---|---|
/// | `Bool`, `Int`, `Double`, `String`, `Date`, `Data` | the plain property-list value, so `UserDefaults.integer(forKey:)`, `@AppStorage` and older code read it |
/// | `[Element]`, `[String: Value]` | an array or dictionary of the elements' stored forms |
/// | `Optional` | the wrapped value's stored form; `nil` removes the key (a synced delete) |
/// | `RawRepresentable` | its raw value's stored form (`Theme.dark` is the string `"dark"`) |
/// | `Codable` | the property list `PropertyListEncoder` produces: a struct is a dictionary of its fields |
///
/// A type that is both `RawRepresentable` and `Codable` is stored as its raw value, the
/// form `@AppStorage` reads.
///
/// A `Codable` value is stored as a property list rather than as JSON `Data` so that it
/// stays readable in `UserDefaults` and in the store, keeps dates and bytes as dates and
/// bytes, and can be merged field by field (`merge: .dictionary`), which an opaque blob
/// cannot.
///
/// Reading never fails: a stored value of another type (written by older code under the
/// same key, or by another app version) reads as the key's default, and stays stored
/// until the next write replaces it. Numbers read as leniently as `UserDefaults`' own
/// accessors read them: an `Int` key reads a whole `Double` (`14.0` is `14`), a `Double`
/// key reads an integer, a `Bool` key reads any number (non-zero is `true`). Strings are
/// never parsed: `"14"` or `"YES"` read as the default, although `integer(forKey:)` and
/// `bool(forKey:)` would parse them.
///
/// Writing can fail: a `Codable` value whose `encode(to:)` throws has no stored form. A
/// typed write of it is refused (nothing is written, locally or to the store) and listed
/// in ``SyncCoordinator/status`` as ``RefusalReason/unencodable(_:)``.
public protocol SyncValue: Sendable {
  /// The value decoded from its stored form, or `nil` when `propertyList` is not a value
  /// of this type.
  init?(propertyList: PropertyListValue)

  /// The value's stored form; `nil` means "no value": writing it removes the key.
  ///
  /// Throws when the value has no stored form (a `Codable` value whose encoding fails),
  /// which is not the same as `nil`: a write of it is refused, and removes nothing.
  var propertyList: PropertyListValue? { get throws }
}

extension Bool: SyncValue {
  /// A Boolean; also any number, as `UserDefaults.bool(forKey:)` reads one: zero is
  /// `false`, anything else `true`. A string is not parsed.
  public init?(propertyList: PropertyListValue) {
    switch propertyList {
    case .bool(let value): self = value
    case .integer(let value): self = value != 0
    case .double(let value): self = value != 0
    default: return nil
    }
  }

  /// `.bool(self)`.
  public var propertyList: PropertyListValue? { .bool(self) }
}

extension Int: SyncValue {
  /// An integer that fits `Int`; also a floating-point number that is exactly one
  /// (`14.0`, which `UserDefaults.integer(forKey:)` reads as `14`). A fraction, a number
  /// out of range and a string are not integers here.
  public init?(propertyList: PropertyListValue) {
    switch propertyList {
    case .integer(let value):
      guard let exact = Int(exactly: value) else { return nil }
      self = exact
    case .double(let value):
      guard let exact = Int(exactly: value) else { return nil }
      self = exact
    default: return nil
    }
  }

  /// `.integer(self)`.
  public var propertyList: PropertyListValue? { .integer(Int64(self)) }
}

extension Double: SyncValue {
  /// A floating-point number; also an integer, which property lists may hold for a
  /// whole number written by other code.
  public init?(propertyList: PropertyListValue) {
    switch propertyList {
    case .double(let value): self = value
    case .integer(let value): self = Double(value)
    default: return nil
    }
  }

  /// `.double(self)`.
  public var propertyList: PropertyListValue? { .double(self) }
}

extension String: SyncValue {
  /// A string.
  public init?(propertyList: PropertyListValue) {
    guard case .string(let value) = propertyList else { return nil }
    self = value
  }

  /// `.string(self)`.
  public var propertyList: PropertyListValue? { .string(self) }
}

extension Date: SyncValue {
  /// A date. (On Linux, Foundation persists dates to the whole second.)
  public init?(propertyList: PropertyListValue) {
    guard case .date(let value) = propertyList else { return nil }
    self = value
  }

  /// `.date(self)`.
  public var propertyList: PropertyListValue? { .date(self) }
}

extension Data: SyncValue {
  /// Raw bytes.
  public init?(propertyList: PropertyListValue) {
    guard case .data(let value) = propertyList else { return nil }
    self = value
  }

  /// `.data(self)`.
  public var propertyList: PropertyListValue? { .data(self) }
}

import Foundation

/// A property-list value: what `UserDefaults` and the iCloud key-value store hold.
///
/// Values cross the ``KeyValueSyncStore`` boundary in this form, so that Zephyr can
/// compare, fingerprint and size them without touching Foundation's untyped `Any`.
///
/// ```swift
/// let theme: PropertyListValue = .dictionary(["name": .string("dusk"), "size": .integer(14)])
/// ```
///
/// Integers are signed 64-bit; an unsigned value above `Int64.max` (which property lists
/// can hold) is kept in ``unsignedInteger(_:)``. When Zephyr compares a local value with
/// the one it last synced, it compares them as they persist: dictionary order does not
/// matter, and off Apple platforms dates are compared to the whole second, because
/// swift-corelibs-foundation persists dates with whole-second precision (Apple's
/// Foundation keeps them exactly, and so does the comparison there). (`==` always
/// compares dates exactly.)
public enum PropertyListValue: Sendable, Hashable {
  /// A string.
  case string(String)
  /// A signed integer.
  case integer(Int64)
  /// An unsigned integer above `Int64.max`; smaller unsigned values are ``integer(_:)``.
  case unsignedInteger(UInt64)
  /// A floating-point number.
  case double(Double)
  /// A Boolean.
  case bool(Bool)
  /// A date.
  case date(Date)
  /// Raw bytes.
  case data(Data)
  /// An ordered list of values.
  case array([PropertyListValue])
  /// A dictionary with string keys.
  case dictionary([String: PropertyListValue])
}

extension PropertyListValue {
  /// A short, human-readable description for logs, truncated to about 60 characters.
  public var logDescription: String {
    let text: String
    switch self {
    case .string(let value): text = "\"\(value)\""
    case .integer(let value): text = String(value)
    case .unsignedInteger(let value): text = String(value)
    case .double(let value): text = String(value)
    case .bool(let value): text = String(value)
    case .date(let value): text = value.ISO8601Format()
    case .data(let value): text = "<\(value.count) bytes>"
    case .array(let value): text = "[\(value.map(\.logDescription).joined(separator: ", "))]"
    case .dictionary(let value):
      text =
        "["
        + value.keys.sorted().map { "\($0): \(value[$0]?.logDescription ?? "")" }
        .joined(separator: ", ") + "]"
    }
    return text.count > 60 ? String(text.prefix(57)) + "..." : text
  }
}

import Foundation

extension PropertyListValue {
  /// The size of the value written as a binary property list, the way the iCloud
  /// key-value store accounts values, computed without serializing it.
  ///
  /// Follows the `bplist00` layout: an 8-byte header, one object per value (a signed
  /// integer written once however often it occurs), an offset table and a 32-byte trailer. This
  /// is exactly what swift-corelibs-foundation's `PropertyListSerialization` writes.
  /// Apple's writer also shares repeated strings, dates and data, so on Apple platforms
  /// the estimate is an upper bound: pre-flight checks err on the side of refusing.
  public var estimatedBinaryPlistSize: Int {
    var counter = BinaryPlistCounter()
    counter.add(self)
    return counter.total
  }

  /// The bytes a store accounts for `value` under `key`: the key's UTF-8 bytes plus the
  /// value's binary-plist size.
  static func storeSize(key: String, value: PropertyListValue) -> Int {
    key.utf8.count + value.estimatedBinaryPlistSize
  }
}

/// Counts the objects and bytes of a binary property list.
private struct BinaryPlistCounter {
  private var objects = 0
  private var references = 0
  private var bytes = 0
  private var integers = Set<Int64>()

  var total: Int {
    let referenceSize = Self.byteCount(objects)
    let offsetTableStart = 8 + bytes + references * referenceSize
    return offsetTableStart + objects * Self.byteCount(offsetTableStart) + 32
  }

  mutating func add(_ value: PropertyListValue) {
    switch value {
    case .array(let items):
      objects += 1
      bytes += Self.markerSize(count: items.count)
      references += items.count
      for item in items { add(item) }
    case .dictionary(let entries):
      objects += 1
      bytes += Self.markerSize(count: entries.count)
      references += entries.count * 2
      for (key, item) in entries {
        add(.string(key))
        add(item)
      }
    case .integer(let number):
      guard integers.insert(number).inserted else { return }
      objects += 1
      bytes += Self.scalarSize(value)
    default:
      objects += 1
      bytes += Self.scalarSize(value)
    }
  }

  private static func scalarSize(_ value: PropertyListValue) -> Int {
    switch value {
    case .integer(let number): 1 + (number < 0 ? 8 : intSize(UInt64(number)))
    case .unsignedInteger: 17
    case .double, .date: 9
    case .data(let data): markerSize(count: data.count) + data.count
    case .string(let text):
      text.utf8.allSatisfy { $0 < 0x80 }
        ? markerSize(count: text.utf8.count) + text.utf8.count
        : markerSize(count: text.utf16.count) + 2 * text.utf16.count
    case .bool: 1
    case .array, .dictionary: 0
    }
  }

  /// A marker byte, followed by an integer object when the count does not fit its nibble.
  private static func markerSize(count: Int) -> Int {
    count < 15 ? 1 : 2 + intSize(UInt64(count))
  }

  private static func intSize(_ value: UInt64) -> Int {
    value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
  }

  private static func byteCount(_ value: Int) -> Int {
    intSize(UInt64(max(value, 0)))
  }
}

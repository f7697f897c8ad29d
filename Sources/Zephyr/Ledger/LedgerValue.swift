import Foundation

/// How the ledger writes a property-list value (a strategy key's merge state above all):
/// a marker byte, 0 for no value, else 2 and the value as ``ValueWriter`` writes it, so a
/// value reads back exactly (a date to the bit) and a 60 KB `Data` is copied once, not
/// bridged through `NSData` byte by byte as swift-corelibs-foundation's
/// `PropertyListSerialization` does.
extension LedgerCodec {
  /// Appends `value` behind its marker (0 for none).
  static func appendValue(_ value: PropertyListValue?, to bytes: inout [UInt8]) {
    guard let value else {
      bytes.append(0)
      return
    }
    bytes.append(2)
    var writer = ValueWriter()
    writer.append(value)
    bytes.append(contentsOf: writer.bytes)
  }
}

extension ByteReader {
  /// A value written by ``LedgerCodec/appendValue(_:to:)``; `nil` for none. Throws on any
  /// damage.
  mutating func value() throws(LedgerError) -> PropertyListValue? {
    switch try byte() {
    case 0: return nil
    case 2:
      var reader = ValueReader(bytes: bytes, position: position)
      do throws(ValueReader.Damage) {
        let value = try reader.value()
        position = reader.position
        return value
      } catch {
        throw LedgerError.corrupt("value \(error.reason)")
      }
    default: throw LedgerError.corrupt("unknown value marker")
    }
  }
}

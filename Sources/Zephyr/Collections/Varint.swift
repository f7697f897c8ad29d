import Foundation

/// Unsigned LEB128: 7 bits a byte, low bits first, so small numbers take one byte. The one
/// variable-length integer of every Zephyr format (records, packed sets, the ledger).
enum Varint {
  /// Appends `value` to `bytes`.
  static func append(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }

  /// The varint at `position`, which moves past it; `nil` when the bytes end first, when
  /// it runs past 10 bytes, or when its value does not fit 64 bits.
  static func read(_ bytes: [UInt8], at position: inout Int) -> UInt64? {
    var value: UInt64 = 0
    for shift in stride(from: UInt64(0), to: 70, by: 7) {
      guard position < bytes.count else { return nil }
      let byte = bytes[position]
      position += 1
      let payload = UInt64(byte & 0x7F)
      guard shift < 63 || payload <= 1 else { return nil }
      value |= payload << shift
      if byte & 0x80 == 0 { return value }
    }
    return nil
  }

  /// `numbers`, one after another.
  static func encode(_ numbers: [UInt64]) -> Data {
    var bytes: [UInt8] = []
    for number in numbers { append(number, to: &bytes) }
    return Data(bytes)
  }

  /// Every number in `data`; `nil` when the bytes end inside a number or one overflows.
  static func decode(_ data: Data) -> [UInt64]? {
    let bytes = [UInt8](data)
    var numbers: [UInt64] = []
    var position = 0
    while position < bytes.count {
      guard let number = read(bytes, at: &position) else { return nil }
      numbers.append(number)
    }
    return numbers
  }
}

import Foundation

/// The record name of a key's record.
///
/// CloudKit takes record names of at most 255 ASCII characters, not starting with an
/// underscore. A key that is such a name, made of letters, digits and `.`, `-`, `:`
/// only, and does not start with the hash prefix, is its own record name (readable in
/// CloudKit's console); any other key (longer, non-ASCII, with spaces or slashes) is
/// named `h-` followed by the 32 hexadecimal digits of its 128-bit FNV-1a hash. The
/// record also holds the key itself, so names never need to be reversed, and a hash
/// collision (not expected between names an app chooses) is seen and refused.
package enum CloudKitRecordName {
  /// The prefix of hashed names: a key that starts with it is hashed too, so that no
  /// key is taken for another's hash.
  package static let hashPrefix = "h-"

  /// The record name of `key`.
  package static func name(for key: String) -> String {
    if key.utf8.count <= 255, !key.isEmpty, !key.hasPrefix(hashPrefix), key.utf8.allSatisfy(isPlain) {
      return key
    }
    var hash = FNV1a128()
    hash.bytes(key.utf8)
    return hashPrefix + hash.hexDigits
  }

  private static func isPlain(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"):
      true
    default: false
    }
  }
}

/// The bytes of a key's record: the value (a Zephyr record, or a foreign value) in the
/// ledger's exact encoding, so a value reads back to the bit on every platform.
package enum CloudKitPayload {
  /// The bytes of `value`.
  package static func encode(_ value: PropertyListValue) -> Data {
    var bytes: [UInt8] = []
    LedgerCodec.appendValue(value, to: &bytes)
    return Data(bytes)
  }

  /// The value of `payload`, or `nil` when the bytes are damaged or hold no value.
  package static func decode(_ payload: Data) -> PropertyListValue? {
    var reader = ByteReader(bytes: [UInt8](payload), position: 0)
    guard let value = try? reader.value(), reader.isAtEnd else { return nil }
    return value
  }
}

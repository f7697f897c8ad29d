/// The name of a domain's ledger file: distinct domain names get distinct file names.
///
/// - A name made only of ASCII letters, digits, `.` and `-` is used as it is.
/// - Any other name is `~` followed by its UTF-8 bytes, those outside that set
///   percent-encoded (`%` and `~` included). It can be decoded, so two names never
///   share it, and its `~` sets it apart from the first kind.
/// - A name that would make the file name longer than 255 bytes (the limit of common
///   file systems) is `~~`, a 128-bit hash of the name, `~` and an encoded prefix of the
///   name. Only this form relies on a hash, and so is not strictly injective: two such
///   names collide only if their hashes do.
enum LedgerFileName {
  /// The extension every ledger file name ends with.
  static let suffix = ".zephyr-ledger"
  /// The longest file name, in UTF-8 bytes, that common file systems accept.
  static let maximumLength = 255

  /// The file name for the ledger of `domainName`.
  static func name(for domainName: String) -> String {
    let limit = maximumLength - suffix.utf8.count
    if domainName.utf8.count <= limit, domainName.utf8.allSatisfy(isKept) {
      return domainName + suffix
    }
    let escaped = escapes(of: domainName)
    if 1 + escaped.reduce(0, { $0 + $1.count }) <= limit {
      return "~" + escaped.joined() + suffix
    }
    var hash = FNV1a128()
    hash.bytes(domainName.utf8)
    var name = "~~" + hash.hexDigits + "~"
    // A readable prefix, cut between escapes; the hash alone tells names apart.
    for escape in escaped {
      guard name.utf8.count + escape.count <= limit else { break }
      name += escape
    }
    return name + suffix
  }

  /// Whether `byte` stands for itself in a file name: an ASCII letter or digit, `.` or `-`.
  private static func isKept(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"):
      return true
    default:
      return false
    }
  }

  /// `name`'s UTF-8 bytes, one string each: the byte itself when it is kept, else `%`
  /// and two uppercase hexadecimal digits.
  private static func escapes(of name: String) -> [String] {
    let digits = Array("0123456789ABCDEF")
    return name.utf8.map { byte in
      isKept(byte)
        ? String(UnicodeScalar(byte)) : "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0f)])
    }
  }
}

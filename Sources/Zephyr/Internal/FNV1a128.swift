/// 128-bit FNV-1a: small and stable across processes and platforms (unlike `Hasher`).
///
/// Not a cryptographic hash: it tells apart names an app chooses, not names an attacker
/// crafts to collide.
struct FNV1a128: Sendable {
  /// The high 64 bits of the state.
  private(set) var high: UInt64 = 0x6c62_272e_07bb_0142
  /// The low 64 bits of the state.
  private(set) var low: UInt64 = 0x62b8_2175_6295_c58d

  /// The FNV-128 prime, 2^88 + 2^8 + 0x3b, in two halves.
  private static let primeHigh: UInt64 = 0x0000_0000_0100_0000
  private static let primeLow: UInt64 = 0x0000_0000_0000_013b

  /// Mixes in one byte.
  mutating func byte(_ byte: UInt8) {
    low ^= UInt64(byte)
    // (high, low) × prime, modulo 2^128.
    let product = low.multipliedFullWidth(by: Self.primeLow)
    high = product.high &+ high &* Self.primeLow &+ low &* Self.primeHigh
    low = product.low
  }

  /// Mixes in every byte of `bytes`.
  mutating func bytes(_ bytes: some Sequence<UInt8>) {
    for value in bytes { byte(value) }
  }

  /// The state as 32 lowercase hexadecimal digits, high half first.
  var hexDigits: String {
    func padded(_ word: UInt64) -> String {
      let digits = String(word, radix: 16)
      return String(repeating: "0", count: 16 - digits.count) + digits
    }
    return padded(high) + padded(low)
  }
}

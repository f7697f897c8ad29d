import Foundation

/// 64-bit FNV-1a: small, stable across processes and platforms (unlike `Hasher`).
struct FNV1a {
  private(set) var state: UInt64 = 0xcbf2_9ce4_8422_2325

  mutating func byte(_ byte: UInt8) {
    state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
  }

  mutating func word(_ word: UInt64) {
    var remaining = word
    for _ in 0..<8 {
      byte(UInt8(truncatingIfNeeded: remaining))
      remaining >>= 8
    }
  }

  mutating func string(_ text: String) {
    word(UInt64(text.utf8.count))
    for byte in text.utf8 { self.byte(byte) }
  }
}

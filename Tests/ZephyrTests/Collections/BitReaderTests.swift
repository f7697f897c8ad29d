import Testing

@testable import Zephyr

/// The windowed ``BitReader`` reads exactly what reading one bit at a time reads: the
/// same values, the same refusals at the end, the same position afterwards.
struct BitReaderTests {
  /// The reference: bit `i` of `bytes`, most significant first.
  struct BitByBit {
    let bytes: [UInt8]
    var position: Int

    mutating func read(bits count: Int) -> UInt64? {
      guard count <= bytes.count * 8 - position else { return nil }
      var value: UInt64 = 0
      for _ in 0..<count {
        value = value << 1 | UInt64(bytes[position >> 3] >> (7 - position & 7) & 1)
        position += 1
      }
      return value
    }

    /// Moves nothing when the bits end first.
    mutating func readUnary(limit: Int) -> Int? {
      let start = position
      var ones = 0
      while ones < limit {
        guard let bit = read(bits: 1) else {
          position = start
          return nil
        }
        if bit == 0 { break }
        ones += 1
      }
      return ones
    }
  }

  /// Random bytes (dense in ones, in zeros, or even), read from a random start with a
  /// random mix of widths 0...64 and unary runs until both readers refuse.
  @Test(arguments: [0, 1, 2])
  func agreesWithReadingBitByBit(onesBias: Int) {
    var generator = SeededGenerator(seed: 0xB17 &+ UInt64(onesBias))
    for _ in 0..<400 {
      let length = Int.random(in: 0...24, using: &generator)
      let bytes = (0..<length).map { _ -> UInt8 in
        let byte = UInt8.random(in: 0...255, using: &generator)
        switch onesBias {
        case 0: return byte & UInt8.random(in: 0...255, using: &generator)
        case 1: return byte | UInt8.random(in: 0...255, using: &generator)
        default: return byte
        }
      }
      let start = Int.random(in: 0...(length * 8), using: &generator)
      var reader = BitReader(bytes: bytes, bitPosition: start)
      var reference = BitByBit(bytes: bytes, position: start)
      for _ in 0..<40 {
        if Bool.random(using: &generator) {
          let width = Int.random(in: 0...64, using: &generator)
          #expect(reader.read(bits: width) == reference.read(bits: width), "\(bytes) from \(start), width \(width)")
        } else {
          let limit = Int.random(in: 1...57, using: &generator)
          #expect(reader.readUnary(limit: limit) == reference.readUnary(limit: limit), "\(bytes) from \(start)")
        }
        #expect(reader.remaining == bytes.count * 8 - reference.position)
        #expect(reader.isAtZeroPaddedEnd == Self.isAtZeroPaddedEnd(bytes, reference.position))
      }
    }
  }

  static func isAtZeroPaddedEnd(_ bytes: [UInt8], _ position: Int) -> Bool {
    let left = bytes.count * 8 - position
    return left < 8 && (left == 0 || bytes[position >> 3] & UInt8((1 << left) - 1) == 0)
  }
}

import Foundation
import Testing

@testable import Zephyr

/// The packed encoding of a sorted list of 64-bit keys: exact round trips, a size near
/// the entropy of the set, and a clean refusal of every malformed blob.
struct PackedIntegersTests {
  static func randomKeys(count: Int, below bound: UInt64, seed: UInt64) -> [UInt64] {
    var generator = SeededGenerator(seed: seed)
    var keys = Set<UInt64>()
    while keys.count < count { keys.insert(UInt64.random(in: 0..<bound, using: &generator)) }
    return keys.sorted()
  }

  /// log2 of the number of sets of `count` values below `bound`: the fewest bits that
  /// can tell one such set from every other.
  /// Summed term by term, `C(U, n) = Π (U - i) / (n - i)`, which stays exact where the
  /// difference of `lgamma`s of numbers near 2^62 would cancel.
  static func entropyBytes(count: Int, below bound: Double) -> Double {
    var bits = 0.0
    for index in 0..<count { bits += log2(bound - Double(index)) - log2(Double(count - index)) }
    return bits / 8
  }

  @Test(
    arguments: [
      (0, UInt64(10)), (1, 1 << 32), (2, 3), (10, 10), (100, 1 << 32), (1_000, 1 << 16), (5_000, 1 << 40),
      (3_000, UInt64.max),
    ] as [(Int, UInt64)])
  func randomSetsRoundTrip(_ count: Int, _ bound: UInt64) throws {
    for seed in UInt64(1)...5 {
      let keys = Self.randomKeys(count: count, below: bound, seed: seed &* 31 &+ UInt64(count))
      #expect(PackedIntegers.decode(PackedIntegers.encode(keys)) == keys)
    }
  }

  @Test func edgeValuesRoundTrip() {
    let samples: [[UInt64]] = [
      [], [0], [UInt64.max], [0, UInt64.max], [UInt64.max - 1, UInt64.max], [0, 1, 2, 3],
      Array(0..<1_000), [1, 1 << 63, UInt64.max], (0..<64).map { 1 << $0 },
    ]
    for keys in samples { #expect(PackedIntegers.decode(PackedIntegers.encode(keys)) == keys, "\(keys.prefix(4))") }
  }

  @Test func outliersCostTheirOwnBitsOnly() {
    // A dense run with one far value: the escape code keeps the run at a bit or two each.
    let keys = Array(UInt64(0)..<10_000) + [1 << 60]
    let blob = PackedIntegers.encode(keys)
    #expect(PackedIntegers.decode(blob) == keys)
    #expect(blob.count < 10_000 / 8 * 2 + 32)
  }

  @Test func unsortedOrRepeatedInputIsSortedFirst() {
    #expect(PackedIntegers.decode(PackedIntegers.encode([9, 3, 3, 7, 0])) == [0, 3, 7, 9])
  }

  @Test func theEncodingIsDeterministic() {
    let keys = Self.randomKeys(count: 2_000, below: 1 << 32, seed: 3)
    #expect(PackedIntegers.encode(keys) == PackedIntegers.encode(keys))
  }

  /// 25,000 random 32-bit ids, a news app's read history. The bound is computed from
  /// the set: within 1% of its entropy (plus a few header bytes), far below the 4-byte pack.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func aReadHistoryPacksNearItsEntropy(_ seed: UInt64) {
    let count = 25_000
    let keys = Self.randomKeys(count: count, below: 1 << 32, seed: seed)
    let blob = PackedIntegers.encode(keys)
    let entropy = Self.entropyBytes(count: count, below: Double(UInt64(1) << 32))
    #expect(Double(blob.count) <= entropy * 1.01 + 16, "\(blob.count) bytes, entropy \(Int(entropy))")
    #expect(blob.count < count * 4 * 60 / 100)
    #expect(PackedIntegers.decode(blob) == keys)
  }

  @Test(arguments: [(180, UInt64(1) << 32), (300, 1 << 20), (20_000, 1 << 24), (1_000, 1 << 62)] as [(Int, UInt64)])
  func otherDensitiesPackNearTheirEntropy(_ count: Int, _ bound: UInt64) {
    let keys = Self.randomKeys(count: count, below: bound, seed: 11)
    let entropy = Self.entropyBytes(count: count, below: Double(bound))
    #expect(Double(PackedIntegers.encode(keys).count) <= entropy * 1.02 + 24)
  }

  // MARK: - Malformed blobs

  @Test func everyTruncationIsRefused() {
    for keys in [[UInt64(5)], [1, 2, 900], Self.randomKeys(count: 300, below: 1 << 32, seed: 5)] {
      let blob = PackedIntegers.encode(keys)
      for length in 0..<blob.count {
        #expect(PackedIntegers.decode(blob.prefix(length)) == nil, "\(length) of \(blob.count) bytes")
      }
    }
  }

  @Test func trailingBytesAreRefused() {
    for keys in [[], [UInt64(5)], Self.randomKeys(count: 300, below: 1 << 32, seed: 5)] {
      let blob = PackedIntegers.encode(keys)
      #expect(PackedIntegers.decode(blob + Data([0])) == nil)
      #expect(PackedIntegers.decode(blob + Data([0xff, 0xff])) == nil)
    }
  }

  @Test func aWrongHeaderIsRefused() {
    var blob = PackedIntegers.encode([1, 2, 3])
    for header in [UInt8(0x00), 0x01, 0x80, 0xff] where header != blob[blob.startIndex] {
      blob[blob.startIndex] = header
      #expect(PackedIntegers.decode(blob) == nil)
    }
    #expect(PackedIntegers.decode(Data()) == nil)
    #expect(PackedIntegers.decode(Data("[1, 2, 3]".utf8)) == nil)
  }

  @Test func aCountLargerThanTheBitsIsRefusedWithoutAllocating() {
    // Header, then a count of 2^62 in LEB128, a first value and a parameter, then 2 bytes.
    var blob = Data([PackedIntegers.formatByte])
    blob += Data([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]) + Data([0x01, 0x01, 0x00, 0x00])
    #expect(PackedIntegers.decode(blob) == nil)
  }

  @Test func overlongOrOverflowingVarintsAreRefused() {
    let header = Data([PackedIntegers.formatByte, 0x01])
    // A first value of 11 bytes, and one of 10 whose last byte overflows 64 bits.
    #expect(PackedIntegers.decode(header + Data(repeating: 0x80, count: 10) + Data([0x00])) == nil)
    #expect(PackedIntegers.decode(header + Data(repeating: 0xff, count: 9) + Data([0x02])) == nil)
    #expect(PackedIntegers.decode(header + Data(repeating: 0xff, count: 9) + Data([0x01])) == [UInt64.max])
  }

  @Test func gapsThatOverflowPastUInt64MaxAreRefused() {
    let blob = PackedIntegers.encode([UInt64.max - 3, UInt64.max])
    // Rewrite the first value as UInt64.max: the gap after it then runs past the top.
    let forged =
      Data([PackedIntegers.formatByte, 0x02]) + Data(repeating: 0xff, count: 9) + Data([0x01])
      + blob.suffix(from: blob.startIndex + 12)
    #expect(PackedIntegers.decode(forged) == nil)
  }

  @Test func randomGarbageNeverCrashes() {
    var generator = SeededGenerator(seed: 99)
    var refused = 0
    for _ in 0..<2_000 {
      let length = Int.random(in: 0..<64, using: &generator)
      var garbage = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
      if !garbage.isEmpty, Bool.random(using: &generator) { garbage[garbage.startIndex] = PackedIntegers.formatByte }
      if let keys = PackedIntegers.decode(garbage) {
        #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
      } else {
        refused += 1
      }
    }
    #expect(refused > 1_500)
  }

  @Test func flippedBitsEitherRefuseOrDecodeSortedKeys() {
    let blob = PackedIntegers.encode(Self.randomKeys(count: 50, below: 1 << 32, seed: 8))
    for index in blob.indices {
      for bit in 0..<8 {
        var damaged = blob
        damaged[index] ^= 1 << bit
        if let keys = PackedIntegers.decode(damaged) {
          #expect(zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 })
        }
      }
    }
  }
}

/// Whether a local packed blob shows a state's value compares sets, not bytes: a blob of
/// the same set under another Golomb parameter shows it, a blob of another count does
/// not (read from the headers alone), and one that does not decode never does.
struct PackedShowsTests {
  /// `keys` (sorted, two or more) encoded with Golomb parameter `divisor` instead of the best.
  static func encode(_ keys: [UInt64], divisor: UInt64) -> Data {
    var bytes: [UInt8] = [PackedIntegers.formatByte]
    Varint.append(UInt64(keys.count), to: &bytes)
    Varint.append(keys[0], to: &bytes)
    Varint.append(divisor, to: &bytes)
    var writer = BitWriter(bytes: bytes)
    let code = GolombCode(divisor: divisor)
    for (previous, key) in zip(keys, keys.dropFirst()) { code.write(key - previous - 1, to: &writer) }
    return Data(writer.finish())
  }

  @Test func headerCountsAreReadWithoutDecoding() {
    for count in [0, 1, 2, 200] {
      let blob = PackedIntegers.encode(PackedIntegersTests.randomKeys(count: count, below: 1 << 32, seed: 7))
      #expect(PackedIntegers.count(of: blob) == UInt64(count))
      // A truncated body keeps its header: the count reads, the blob does not decode.
      if count > 2 { #expect(PackedIntegers.count(of: blob.dropLast(3)) == UInt64(count)) }
    }
    #expect(PackedIntegers.count(of: Data()) == nil)
    #expect(PackedIntegers.count(of: Data([0x00, 3])) == nil)
    #expect(PackedIntegers.count(of: Data([PackedIntegers.formatByte])) == nil)
  }

  @Test func showsComparesTheSetsTheBlobsHold() {
    let state = ReplicaState(kind: .packedSet)
    var generator = SeededGenerator(seed: 0x5_4085)
    for round in 0..<200 {
      let count = Int.random(in: 2..<400, using: &generator)
      let keys = PackedIntegersTests.randomKeys(count: count, below: 1 << 32, seed: UInt64(round))
      let merged = PropertyListValue.data(PackedIntegers.encode(keys))
      let divisor = UInt64.random(in: 1..<(1 << 30), using: &generator)
      #expect(state.shows(.data(Self.encode(keys, divisor: divisor)), merged: merged), "same set, M = \(divisor)")
      #expect(!state.shows(.data(PackedIntegers.encode(Array(keys.dropLast()))), merged: merged))
      #expect(!state.shows(.data(PackedIntegers.encode(keys.dropLast() + [keys.last! + 1])), merged: merged))
      let damaged = Self.encode(keys, divisor: divisor).dropLast()
      #expect(!state.shows(.data(damaged), merged: merged), "same header, body cut")
    }
  }
}

import Foundation

/// A compact, self-checking encoding of a set of 64-bit keys: sorted, delta-coded, and the
/// gaps Golomb-coded with one parameter per blob. ``PackedSet`` is stored in this form,
/// and the merge layer can use it for any sorted list of `UInt64` (element keys, grouped
/// metadata).
///
/// ```swift
/// let blob = PackedIntegers.encode([3, 17, 1 << 40])   // 20 bytes
/// PackedIntegers.decode(blob)                          // [3, 17, 1099511627776]
/// PackedIntegers.decode(blob.dropLast())               // nil: truncated
/// ```
///
/// Layout, in order:
///
/// | field | form |
/// |---|---|
/// | format | one byte, ``formatByte`` |
/// | count `n` | LEB128 varint |
/// | first key | LEB128 varint (when `n ≥ 1`) |
/// | Golomb parameter `M ≥ 1` | LEB128 varint (when `n ≥ 2`) |
/// | `n - 1` gaps | bits, most significant first: each `gap = key[i] - key[i-1] - 1` as `q = gap / M` in unary (`q` ones, then a zero) and `gap % M` in truncated binary; a quotient of ``escapeQuotient`` or more is written as that many ones and the gap's 64 bits. Zero bits pad the last byte. |
///
/// `M` is chosen per blob for the fewest bits (near `ln 2 ×` the typical gap), which is
/// within a fraction of a percent of the entropy of a random set: 25,000 random 32-bit ids
/// take about 59 KB (the entropy of such a set is 58.8 KB; 4 bytes an id is 100 KB).
///
/// Decoding checks everything: the format byte, varints (at most 10 bytes, no overflow),
/// a count that the remaining bits can hold (so a forged count allocates nothing), keys
/// that stay below 2^64, zero padding and no byte after it. Any failure is `nil`, never a
/// trap. The encoding is deterministic: equal sets encode to equal bytes.
///
/// Cost: both ways O(n); encoding tries a handful of parameters, each one pass over the gaps.
enum PackedIntegers {
  /// The first byte of every blob (format 1). Its high bit keeps it apart from text and
  /// from small integers that a foreign writer may have packed by hand.
  static let formatByte: UInt8 = 0x9A

  /// Quotients from this one up are escaped: written as this many ones and the raw gap,
  /// so one far outlier costs 96 bits rather than a unary run of billions.
  static let escapeQuotient: UInt64 = 32

  /// The blob of `keys`. Strictly increasing input is encoded as is; any other input is
  /// sorted and its duplicates dropped first (the blob holds a set).
  static func encode(_ keys: [UInt64]) -> Data {
    let sorted = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 } ? keys : Array(Set(keys)).sorted()
    var bytes: [UInt8] = [formatByte]
    Varint.append(UInt64(sorted.count), to: &bytes)
    guard let first = sorted.first else { return Data(bytes) }
    Varint.append(first, to: &bytes)
    guard sorted.count > 1 else { return Data(bytes) }
    let gaps = zip(sorted, sorted.dropFirst()).map { $1 - $0 - 1 }
    let code = GolombCode.best(for: gaps)
    Varint.append(code.divisor, to: &bytes)
    var writer = BitWriter(bytes: bytes)
    writer.reserve(bits: code.cost(of: gaps))
    for gap in gaps { code.write(gap, to: &writer) }
    return Data(writer.finish())
  }

  /// The count a blob's header gives, read without decoding the keys; `nil` when the
  /// header is not a blob's. (Whether the keys decode is ``decode(_:)``'s to say.)
  static func count(of data: Data) -> UInt64? {
    let header = [UInt8](data.prefix(11))
    guard header.first == formatByte else { return nil }
    var position = 1
    return Varint.read(header, at: &position)
  }

  /// The keys `data` holds, strictly increasing; `nil` unless `data` is exactly one blob
  /// that ``encode(_:)`` could have written (any parameter, any count).
  static func decode(_ data: Data) -> [UInt64]? {
    let bytes = [UInt8](data)
    guard bytes.first == formatByte else { return nil }
    var position = 1
    guard let count = Varint.read(bytes, at: &position) else { return nil }
    if count == 0 { return position == bytes.count ? [] : nil }
    guard let first = Varint.read(bytes, at: &position) else { return nil }
    if count == 1 { return position == bytes.count ? [first] : nil }
    guard let divisor = Varint.read(bytes, at: &position), divisor >= 1 else { return nil }
    // Every gap takes at least one bit: a count the bytes cannot hold is refused before
    // anything is allocated for it.
    guard count - 1 <= UInt64(bytes.count - position) * 8 else { return nil }
    let code = GolombCode(divisor: divisor)
    var reader = BitReader(bytes: bytes, bitPosition: position * 8)
    var keys: [UInt64] = []
    keys.reserveCapacity(Int(count))
    keys.append(first)
    var previous = first
    for _ in 1..<count {
      guard let gap = code.read(from: &reader) else { return nil }
      let (step, overflowA) = previous.addingReportingOverflow(gap)
      let (key, overflowB) = step.addingReportingOverflow(1)
      guard !overflowA, !overflowB else { return nil }
      keys.append(key)
      previous = key
    }
    return reader.isAtZeroPaddedEnd ? keys : nil
  }
}

/// A Golomb code with divisor `M`: a gap is `q = gap / M` in unary and `r = gap % M` in
/// truncated binary (`b - 1` bits for the first `2^b - M` remainders, `b` bits for the
/// others, `b` = bits of `M - 1`). Optimal among prefix codes for geometric gaps, which is
/// what the gaps of a random set are.
struct GolombCode {
  let divisor: UInt64
  /// Bits of the longest remainder.
  private let width: Int
  /// Remainders below this take `width - 1` bits.
  private let cutoff: UInt64

  init(divisor: UInt64) {
    self.divisor = divisor
    width = divisor == 1 ? 0 : 64 - (divisor - 1).leadingZeroBitCount
    // 2^width - M, computed without overflow when width is 64.
    cutoff = width == 64 ? 0 &- divisor : (UInt64(1) << width) - divisor
  }

  /// The divisor that codes `gaps` in the fewest bits among a few candidates: `ln 2 ×`
  /// the mean gap and `ln 2 ×` the median gap (the optimum for geometric gaps; the median
  /// is not thrown off by a few outliers), and each of them halved and doubled.
  static func best(for gaps: [UInt64]) -> GolombCode {
    let mean = gaps.reduce(0.0) { $0 + Double($1) } / Double(gaps.count)
    let stride = max(1, gaps.count / 1_024)
    let sample = Swift.stride(from: 0, to: gaps.count, by: stride).map { gaps[$0] }.sorted()
    let median = Double(sample[sample.count / 2])
    var candidates: Set<UInt64> = []
    for typical in [mean, median] {
      let base = divisorNear(typical * 0.693_147_180_559_945_3)
      candidates.formUnion([base, max(1, base / 2), base < UInt64.max / 2 ? base * 2 : base])
    }
    let codes = candidates.sorted().map(GolombCode.init(divisor:))
    var best = codes[0]
    var bestCost = best.cost(of: gaps)
    for code in codes.dropFirst() {
      let cost = code.cost(of: gaps)
      if cost < bestCost { (best, bestCost) = (code, cost) }
    }
    return best
  }

  private static func divisorNear(_ value: Double) -> UInt64 {
    guard value >= 1 else { return 1 }
    guard value < 1.8e19 else { return UInt64(1) << 63 }
    return UInt64(value.rounded())
  }

  /// The bits `gaps` take in this code.
  func cost(of gaps: [UInt64]) -> Int {
    var bits = 0
    for gap in gaps {
      let quotient = gap / divisor
      if quotient >= PackedIntegers.escapeQuotient {
        bits += Int(PackedIntegers.escapeQuotient) + 64
      } else {
        bits += Int(quotient) + 1 + (gap % divisor < cutoff ? width - 1 : width)
      }
    }
    return bits
  }

  func write(_ gap: UInt64, to writer: inout BitWriter) {
    let quotient = gap / divisor
    if quotient >= PackedIntegers.escapeQuotient {
      writer.writeOnes(Int(PackedIntegers.escapeQuotient))
      writer.write(gap, bits: 64)
      return
    }
    writer.writeOnes(Int(quotient))
    writer.write(0, bits: 1)
    guard width > 0 else { return }
    let remainder = gap % divisor
    if remainder < cutoff {
      writer.write(remainder, bits: width - 1)
    } else {
      writer.write(remainder + cutoff, bits: width)
    }
  }

  /// The next gap, or `nil` when the bits end first or it does not fit 64 bits.
  func read(from reader: inout BitReader) -> UInt64? {
    guard let ones = reader.readUnary(limit: Int(PackedIntegers.escapeQuotient)) else { return nil }
    let quotient = UInt64(ones)
    if quotient == PackedIntegers.escapeQuotient { return reader.read(bits: 64) }
    var remainder: UInt64 = 0
    if width > 0 {
      guard let short = reader.read(bits: width - 1) else { return nil }
      if short < cutoff {
        remainder = short
      } else {
        guard let low = reader.read(bits: 1) else { return nil }
        remainder = (short << 1 | low) - cutoff
        guard remainder < divisor else { return nil }
      }
    }
    let (scaled, overflow) = quotient.multipliedReportingOverflow(by: divisor)
    guard !overflow else { return nil }
    let (gap, carry) = scaled.addingReportingOverflow(remainder)
    return carry ? nil : gap
  }
}

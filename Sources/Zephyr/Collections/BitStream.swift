/// Appends bits to bytes, most significant bit first.
struct BitWriter {
  private var bytes: [UInt8]
  /// The bits not yet in `bytes`, right-aligned; fewer than 8 between calls.
  private var pending: UInt64 = 0
  private var pendingCount = 0

  /// A writer that appends after `bytes`.
  init(bytes: [UInt8]) {
    self.bytes = bytes
  }

  mutating func reserve(bits: Int) {
    bytes.reserveCapacity(bytes.count + bits / 8 + 1)
  }

  /// Appends the low `count` bits of `value` (`count` 0...64).
  mutating func write(_ value: UInt64, bits count: Int) {
    if count > 32 {
      write(value >> 32, bits: count - 32)
      write(value & 0xFFFF_FFFF, bits: 32)
      return
    }
    guard count > 0 else { return }
    pending = pending << count | (value & (UInt64.max >> (64 - count)))
    pendingCount += count
    while pendingCount >= 8 {
      pendingCount -= 8
      bytes.append(UInt8(truncatingIfNeeded: pending >> pendingCount))
    }
    pending &= (UInt64(1) << pendingCount) - 1
  }

  /// Appends `count` one bits.
  mutating func writeOnes(_ count: Int) {
    var left = count
    while left > 0 {
      let run = min(left, 32)
      write(UInt64.max, bits: run)
      left -= run
    }
  }

  /// The bytes, the last one padded with zero bits.
  consuming func finish() -> [UInt8] {
    if pendingCount > 0 { bytes.append(UInt8(truncatingIfNeeded: pending << (8 - pendingCount))) }
    return bytes
  }
}

/// Reads bits from bytes, most significant bit first, never past the end.
///
/// Reads take up to 57 bits from one 64-bit window (eight bytes loaded at once), so a
/// Golomb gap costs a few operations rather than a loop per bit.
struct BitReader {
  /// The bytes, followed by eight zero bytes so that a window never reads past them.
  private let padded: [UInt8]
  /// Bits in the bytes themselves (the padding excluded).
  private let bitCount: Int
  private var position: Int

  /// A reader of `bytes` from bit `bitPosition` on.
  init(bytes: [UInt8], bitPosition: Int) {
    var padded = bytes
    padded.append(contentsOf: repeatElement(0, count: 8))
    self.padded = padded
    bitCount = bytes.count * 8
    position = bitPosition
  }

  /// Bits left to read.
  var remaining: Int { bitCount - position }

  /// The next 57 or more bits, left-aligned, without moving; bits past the end read as 0.
  private func window() -> UInt64 {
    let byte = position >> 3
    let word = padded.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: byte, as: UInt64.self) }
    return UInt64(bigEndian: word) << (position & 7)
  }

  /// The next `count` bits (0...64) as a number, or `nil` (and nothing consumed) when
  /// fewer are left.
  mutating func read(bits count: Int) -> UInt64? {
    guard count <= remaining else { return nil }
    guard count > 0 else { return 0 }
    if count > 57 {
      guard let high = read(bits: count - 32), let low = read(bits: 32) else { return nil }
      return high << 32 | low
    }
    let value = window() >> (64 - count)
    position += count
    return value
  }

  /// Counts one bits up to `limit` (at most 57): with a zero before the limit, the ones
  /// and that zero are consumed and their count returned; with `limit` ones, those are
  /// consumed and `limit` returned. `nil`, and nothing consumed, when the bits end first.
  mutating func readUnary(limit: Int) -> Int? {
    let ones = min((~window()).leadingZeroBitCount, limit)
    let consumed = ones < limit ? ones + 1 : ones
    guard consumed <= remaining else { return nil }
    position += consumed
    return ones
  }

  /// Whether only zero padding, less than a byte of it, is left.
  var isAtZeroPaddedEnd: Bool {
    let left = remaining
    guard left < 8 else { return false }
    guard left > 0 else { return true }
    return padded[position >> 3] & UInt8((1 << left) - 1) == 0
  }
}

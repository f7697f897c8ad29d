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
struct BitReader {
  private let bytes: [UInt8]
  private var position: Int

  /// A reader of `bytes` from bit `bitPosition` on.
  init(bytes: [UInt8], bitPosition: Int) {
    self.bytes = bytes
    position = bitPosition
  }

  /// The next `count` bits (0...64) as a number, or `nil` when fewer are left.
  mutating func read(bits count: Int) -> UInt64? {
    guard count <= bytes.count * 8 - position else { return nil }
    var value: UInt64 = 0
    var left = count
    while left > 0 {
      let offset = position & 7
      let available = 8 - offset
      let take = min(available, left)
      let byte = UInt64(bytes[position >> 3])
      value = value << take | (byte >> (available - take)) & ((1 << take) - 1)
      position += take
      left -= take
    }
    return value
  }

  /// Whether only zero padding, less than a byte of it, is left.
  var isAtZeroPaddedEnd: Bool {
    let left = bytes.count * 8 - position
    guard left < 8 else { return false }
    guard left > 0 else { return true }
    return bytes[position >> 3] & UInt8((1 << left) - 1) == 0
  }
}

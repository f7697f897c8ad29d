import Foundation

/// A 64-bit hash of a value's canonical encoding, stored in the ledger instead of the
/// value itself.
///
/// The canonical encoding is what survives a round trip through every platform's
/// persistence: dictionary keys are sorted, NaNs are one NaN, and, off Apple platforms,
/// dates are floored to whole seconds (swift-corelibs-foundation writes defaults as XML with whole-second
/// dates, so `5.123` reads back as `5.0` in the next process). A value read back after a
/// restart therefore fingerprints the same as the value that was written.
///
/// Every case has its own tag byte (`.bool` one for each value), and every
/// variable-length part is preceded by its length, so distinct canonical values have
/// distinct encodings; only the 64-bit hash itself can collide. Integers above `Int64.max` have their own tag
/// (10) because their 64 bits are also those of a negative integer; the encoding of
/// every other value is unchanged, so fingerprints in existing ledgers stay valid.
struct Fingerprint: Hashable, Sendable {
  var rawValue: UInt64
}

extension PropertyListValue {
  /// The value's fingerprint; equal fingerprints mean "the same value" to Zephyr. A large
  /// `Data` fingerprinted lately is not hashed again (see ``FingerprintMemo``).
  var fingerprint: Fingerprint {
    if case .data(let data) = self, data.count >= FingerprintMemo.minimumBytes {
      return FingerprintMemo.shared.fingerprint(of: data) { $0.computedFingerprint }
    }
    return computedFingerprint
  }

  /// The fingerprint, hashed.
  var computedFingerprint: Fingerprint {
    var hasher = FNV1a()
    feed(into: &hasher)
    return Fingerprint(rawValue: hasher.state)
  }

  /// Whether two values are the same value once persisted (see ``fingerprint``).
  func isSameValue(as other: PropertyListValue) -> Bool {
    fingerprint == other.fingerprint
  }

  private func feed(into hasher: inout FNV1a) {
    switch self {
    case .string(let value):
      hasher.byte(1)
      hasher.string(value)
    case .integer(let value):
      hasher.byte(2)
      hasher.word(UInt64(bitPattern: value))
    case .unsignedInteger(let value):
      if let signed = Int64(exactly: value) {
        // Not a valid case (see ``PropertyListValue/unsignedInteger(_:)``), but it persists
        // as the integer it equals: fingerprint it as one.
        PropertyListValue.integer(signed).feed(into: &hasher)
      } else {
        // Its own tag: its 64 bits are also those of a negative `.integer`.
        hasher.byte(10)
        hasher.word(value)
      }
    case .double(let value):
      hasher.byte(3)
      hasher.word(value.isNaN ? Double.nan.bitPattern : (value == 0 ? 0 : value.bitPattern))
    case .bool(let value):
      hasher.byte(value ? 5 : 4)
    case .date(let value):
      #if canImport(Darwin)
        // Apple's Foundation persists dates exactly: a change within one second is a change.
        hasher.byte(11)
        let interval = value.timeIntervalSince1970
        hasher.word(interval.isNaN ? Double.nan.bitPattern : (interval == 0 ? 0 : interval.bitPattern))
      #else
        // swift-corelibs-foundation persists whole seconds only.
        hasher.byte(6)
        let seconds = value.timeIntervalSince1970.rounded(.down)
        hasher.word(UInt64(bitPattern: seconds.isFinite ? Int64(exactly: seconds) ?? 0 : 0))
      #endif
    case .data(let value):
      hasher.byte(7)
      hasher.word(UInt64(value.count))
      value.withUnsafeBytes { bytes in for byte in bytes { hasher.byte(byte) } }
    case .array(let value):
      hasher.byte(8)
      hasher.word(UInt64(value.count))
      for element in value { element.feed(into: &hasher) }
    case .dictionary(let value):
      hasher.byte(9)
      hasher.word(UInt64(value.count))
      for key in value.keys.sorted() {
        hasher.string(key)
        value[key]?.feed(into: &hasher)
      }
    }
  }
}

/// The fingerprints of the large `Data` values fingerprinted last, by storage. One sync
/// fingerprints the same value several times over (a packed set's 60 KB: as read, as
/// agreed on, as written ahead), and hashing is byte by byte.
///
/// A value is found again by its bytes' address and count. An entry holds the `Data`
/// itself, so its storage can be neither freed (and the address reused) nor changed in
/// place (a `Data` held twice is copied on write): the same address and count are the
/// same bytes. (A `Data(bytesNoCopy:count:deallocator: .none)` whose owner changes the
/// bytes while a copy of it lives breaks `Data`'s own contract, and this premise.) The
/// entries keep at most eight values, and the buffers of slices among them, alive until
/// newer ones replace them.
struct FingerprintMemo: Sendable {
  /// Smaller values are hashed each time: as fast as a lookup.
  static let minimumBytes = 4_096
  static let capacity = 8
  static let shared = Locked(FingerprintMemo())

  private struct Entry: Sendable {
    var data: Data
    var address: UInt
    var fingerprint: Fingerprint
  }
  private var entries: [Entry] = []

  /// How many fingerprints were found here rather than hashed.
  private(set) var hits = 0

  /// The address of `data`'s first byte.
  static func address(of data: Data) -> UInt {
    data.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
  }

  /// The fingerprint remembered for the bytes at `address`, `count` long.
  mutating func lookUp(address: UInt, count: Int) -> Fingerprint? {
    guard let index = entries.lastIndex(where: { $0.address == address && $0.data.count == count }) else { return nil }
    hits += 1
    return entries[index].fingerprint
  }

  /// Remembers `fingerprint` of `data`, forgetting the oldest entry when full.
  mutating func remember(_ fingerprint: Fingerprint, of data: Data, address: UInt) {
    if entries.count == Self.capacity { entries.removeFirst() }
    entries.append(Entry(data: data, address: address, fingerprint: fingerprint))
  }
}

extension Locked where Value == FingerprintMemo {
  /// `data`'s fingerprint: remembered, or computed by `compute` with no lock held and
  /// remembered.
  func fingerprint(of data: Data, compute: (PropertyListValue) -> Fingerprint) -> Fingerprint {
    let address = FingerprintMemo.address(of: data)
    if let known = withLock({ $0.lookUp(address: address, count: data.count) }) { return known }
    let fingerprint = compute(.data(data))
    withLock { $0.remember(fingerprint, of: data, address: address) }
    return fingerprint
  }
}

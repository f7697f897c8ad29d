import Foundation

/// The writer's wall-clock time, carried by a record when the writing device measures
/// delivery delay (``SyncConfiguration/measuresDeliveryDelay``), so that a device that
/// receives it can tell how long it took to arrive (``SyncMetrics/deliveryDelay``).
///
/// One more field at the end of the stored record (plain `z1`/`z2`, or a `z3` envelope):
/// a 6-byte `Data`, the milliseconds since 2001-01-01 UTC as a big-endian 48-bit number
/// (enough for 8,900 years). The store accounts 9 bytes for it: the 6 bytes, the data's
/// marker byte, and its reference and offset in the binary property list.
///
/// ```
/// ["z1", 7, "k3f9qa", "dusk", <00 b6 2d 4f 91 20>]
/// ```
///
/// Every reader of this version strips it before decoding the record, whether or not it
/// measures (a field count no record has without it tells it apart: 5 or 6 for `z1`, 8 or 11
/// for `z2`, 3 for `z3`, the last field a 6-byte `Data`). Builds from before it read such
/// a record as malformed.
enum SentTime {
  static let byteCount = 6
  private static let mask: UInt64 = (1 << 48) - 1

  /// `record` (a stored record, an array) with `date` appended.
  static func appending(_ date: Date, to record: PropertyListValue) -> PropertyListValue {
    guard case .array(let fields) = record else { return record }
    let milliseconds = UInt64(max(0, (date.timeIntervalSinceReferenceDate * 1_000).rounded())) & mask
    let bytes = (0..<byteCount).reversed().map { UInt8(truncatingIfNeeded: milliseconds >> UInt64($0 * 8)) }
    return .array(fields + [.data(Data(bytes))])
  }

  /// The writer's time in a stored record's fields, when they carry it.
  static func read(_ fields: [PropertyListValue]) -> Date? {
    guard carries(fields), case .data(let data)? = fields.last else { return nil }
    let milliseconds = data.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    return Date(timeIntervalSinceReferenceDate: Double(milliseconds) / 1_000)
  }

  /// The writer's time in a raw store value, when it carries it.
  static func read(_ storeValue: PropertyListValue?) -> Date? {
    guard case .array(let fields)? = storeValue else { return nil }
    return read(fields)
  }

  /// Whether a stored record's fields end with the writer's time.
  static func carries(_ fields: [PropertyListValue]) -> Bool {
    guard case .data(let data)? = fields.last, data.count == byteCount, case .string(let tag)? = fields.first
    else { return false }
    switch tag {
    // (A record made over a foreign value has one field more: its name, an integer.)
    case SyncRecord.valueTag, SyncRecord.tombstoneTag: return fields.count == 5 || fields.count == 6
    case ReplicaRecord.tag:
      // (No field after a state's groups is `Data` but a packed set's three: an order is a
      // list, a deletion a date.)
      if case .string(ReplicaKind.packedSet.rawValue)? = fields.dropFirst(3).first { return fields.count >= 11 }
      return fields.count >= 8
    case CompressedRecord.tag: return fields.count == 3
    default: return false
    }
  }
}

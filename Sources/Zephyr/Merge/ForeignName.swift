import Foundation

/// The foreign value a last-writer-wins record was made over, named in the record.
///
/// A foreign value (a store value that is no Zephyr record) has no place in the order of
/// writes: each device that takes it reads it at a generation of its own, one above its
/// own history of the key. A record stamped below that may be an edit made over the
/// foreign value on a device with less history, or a stale write made before it that the
/// store's last-writer-wins brought back. The name tells them apart: a record made over
/// an agreed foreign value names it, and an agreed foreign value gives way only to a
/// record that names it or is stamped above where the device read it (see
/// <doc:MergeSemantics#Foreign-writes>).
///
/// The name is the low 32 bits of the value's ``Fingerprint``, one optional trailing
/// field of the record (an integer, 0 through 2^32 − 1):
///
/// ```
/// ["z1", 7, "k3f9qa", "dusk", 2914772841]   made over the foreign value so named
/// ```
///
/// Two foreign values of one key whose fingerprints share their low 32 bits are one name
/// (a chance of 1 in 2^32 per pair; see <doc:LimitsOfTheGuarantees>).
struct ForeignName: Hashable, Sendable {
  var rawValue: UInt32

  init(rawValue: UInt32) {
    self.rawValue = rawValue
  }

  /// The name of the value with `fingerprint`.
  init(_ fingerprint: Fingerprint) {
    rawValue = UInt32(truncatingIfNeeded: fingerprint.rawValue)
  }

  /// The name of `value`.
  init(of value: PropertyListValue) {
    self.init(value.fingerprint)
  }

  /// The name of the foreign value `entry` agreed on; `nil` when it agreed on a Zephyr
  /// record's state (it names a device) or on a delete.
  init?(agreedIn entry: LedgerEntry?) {
    guard let entry, entry.origin.isEmpty, case .value(let fingerprint) = entry.agreed else { return nil }
    self.init(fingerprint)
  }

  /// Whether this is the name of the foreign value `entry` agreed on.
  func names(_ entry: LedgerEntry) -> Bool {
    ForeignName(agreedIn: entry) == self
  }

  /// The record field.
  var encoded: PropertyListValue { .integer(Int64(rawValue)) }

  /// The name a record field holds; `nil` when it holds no name.
  init?(field: PropertyListValue) {
    guard case .integer(let value) = field, let raw = UInt32(exactly: value) else { return nil }
    rawValue = raw
  }
}

extension SyncRecord {
  /// A stored last-writer-wins record (plain or compressed, with or without the writer's
  /// time) made over the foreign value `name` names instead of the one it named, if any;
  /// `nil` when `stored` is no such record.
  static func stored(_ stored: PropertyListValue, madeOver name: ForeignName) -> PropertyListValue? {
    guard case .record(var record) = RemoteState(storeValue: stored) else { return nil }
    record.madeOver = name
    var result = record.encoded
    if CompressedRecord.isEnvelope(stored) {
      guard let envelope = CompressedRecord.envelope(of: result) else { return nil }
      result = envelope
    }
    if let sent = SentTime.read(stored) { result = SentTime.appending(sent, to: result) }
    return result
  }
}

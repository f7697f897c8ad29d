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
/// ["z1", 7, "k3f9qa", "dusk", 2914772841]               made over the foreign value so named
/// ["z1", 9, "b7d2mx", "dawn", [2914772841, 80531]]      made over the first, which
///                                                        descends from the second
/// ```
///
/// An edit of a state that descends from foreign values names them too, newest first,
/// at most ``maximumNamed``: a device that read an earlier one at a generation above
/// the edit (its history was longer) still finds the edit later than it. A foreign value
/// that a device agreed on and publishes again, when the store lost it, names itself
/// (``SyncRecord/republishesForeignValue``): it is earlier than every state made over it.
///
/// Two foreign values of one key whose fingerprints share their low 32 bits are one name
/// (a chance of 1 in 2^32 per pair; see <doc:LimitsOfTheGuarantees>).
struct ForeignName: Hashable, Sendable {
  var rawValue: UInt32

  /// The most names a record carries: the newest foreign values its state descends from.
  static let maximumNamed = 4

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
  /// write (or a delete).
  init?(agreedIn entry: LedgerEntry?) {
    guard let entry, entry.isForeignValue, case .value(let fingerprint) = entry.agreed else { return nil }
    self.init(fingerprint)
  }

  /// One name as a property list: an integer.
  var encoded: PropertyListValue { .integer(Int64(rawValue)) }

  /// The name an integer holds; `nil` for anything else.
  init?(field: PropertyListValue) {
    guard case .integer(let value) = field, let raw = UInt32(exactly: value) else { return nil }
    rawValue = raw
  }

  /// The record field of `names`: one name, or an array of several; `nil` for none.
  static func field(_ names: [ForeignName]) -> PropertyListValue? {
    switch names.count {
    case 0: nil
    case 1: names[0].encoded
    default: .array(names.map(\.encoded))
    }
  }

  /// The names a record field holds (1 to ``maximumNamed``); `nil` for anything else.
  static func names(field: PropertyListValue) -> [ForeignName]? {
    if let name = ForeignName(field: field) { return [name] }
    guard case .array(let fields) = field, (2...maximumNamed).contains(fields.count) else { return nil }
    let names = fields.compactMap(ForeignName.init(field:))
    return names.count == fields.count ? names : nil
  }

  /// `first` then `rest`, each name once, at most ``maximumNamed``, leaving out `value`'s
  /// name (a write of a foreign value itself is no edit made over it).
  static func chain(_ first: ForeignName?, _ rest: [ForeignName], writing value: PropertyListValue?) -> [ForeignName] {
    let own = value.map(ForeignName.init(of:))
    var names: [ForeignName] = []
    for name in (first.map { [$0] } ?? []) + rest where name != own && !names.contains(name) {
      names.append(name)
    }
    return Array(names.prefix(maximumNamed))
  }
}

extension LedgerEntry {
  /// Whether the agreed state is a foreign value: read from the store (the empty origin),
  /// or a record that publishes one again (it names its own value).
  var isForeignValue: Bool {
    guard case .value(let fingerprint) = agreed else { return false }
    return origin.isEmpty || madeOver.contains(ForeignName(fingerprint))
  }

  /// What a record of this state, or of an edit made over it, names: the state itself
  /// when it is a foreign value, else the foreign values it descends from.
  var foreignAncestors: [ForeignName] {
    ForeignName(agreedIn: self).map { [$0] } ?? madeOver
  }
}

extension SyncRecord {
  /// Whether the record publishes a foreign value again (a device that agreed on the
  /// value lost it from the store): it names its own value. It takes no place in the
  /// order of writes above the edits made over that value.
  var republishesForeignValue: Bool {
    guard !madeOver.isEmpty, case .value(let value) = content else { return false }
    return madeOver.contains(ForeignName(of: value))
  }

  /// A stored last-writer-wins record (plain or compressed, with or without the writer's
  /// time) made over the foreign value `name` names, newest of those it names; `nil` when
  /// `stored` is no such record.
  static func stored(_ stored: PropertyListValue, madeOver name: ForeignName) -> PropertyListValue? {
    guard case .record(var record) = RemoteState(storeValue: stored) else { return nil }
    record.madeOver = ForeignName.chain(name, record.madeOver, writing: record.content.value)
    var result = record.encoded
    if CompressedRecord.isEnvelope(stored) {
      guard let envelope = CompressedRecord.envelope(of: result) else { return nil }
      result = envelope
    }
    if let sent = SentTime.read(stored) { result = SentTime.appending(sent, to: result) }
    return result
  }
}

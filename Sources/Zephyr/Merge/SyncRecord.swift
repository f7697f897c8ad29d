import Foundation

/// What one store key holds for one synced key: a generation, the device that wrote it,
/// and either the value or a tombstone.
///
/// Encoded as a four-element property-list array so that the overhead over the bare
/// value stays small (about 20 bytes as a binary plist):
///
/// ```
/// ["z1",  7, "k3f9qa", <value>]          a value at generation 7 written by device k3f9qa
/// ["z1d", 8, "b7d2mx", <deletion date>]  a tombstone at generation 8
/// ```
///
/// The first element is the format tag: `z` + format version (+ `d` for a tombstone).
/// A record made over a foreign value has a fifth field, the ``ForeignName`` of that value
/// (an integer), or of the last few it descends from, newest first (an array of them).
/// A store value that is not record-shaped is a *foreign write* (see ``RemoteState``).
/// A key declared compressed may hold its record in a ``CompressedRecord`` envelope (`z3`).
///
/// Keys merged by a ``MergeStrategy`` other than last-writer-wins are written as a
/// ``ReplicaRecord`` (`z2`) instead, which carries the whole merge state.
struct SyncRecord: Sendable, Equatable {
  /// The record's content: a value, or the date it was deleted.
  enum Content: Sendable, Equatable {
    case value(PropertyListValue)
    case deleted(Date)
  }

  /// The logical generation, 1 through ``Generation/maximum``.
  var generation: UInt64
  /// The short id of the device that wrote the record.
  var origin: String
  var content: Content
  /// The foreign value the record was made over, when it was (see ``ForeignName``).
  var madeOver: [ForeignName] = []

  static let formatVersion = 1
  static let valueTag = "z1"
  static let tombstoneTag = "z1d"
  /// Longest origin id accepted when decoding.
  static let maximumOriginLength = 64

  /// The record's place in the order of writes.
  var stamp: Stamp { Stamp(generation: generation, origin: origin) }

  init(generation: UInt64, origin: String, content: Content, madeOver: [ForeignName] = []) {
    (self.generation, self.origin, self.content, self.madeOver) = (generation, origin, content, madeOver)
  }

  init(stamp: Stamp, content: Content, madeOver: [ForeignName] = []) {
    self.init(generation: stamp.generation, origin: stamp.origin, content: content, madeOver: madeOver)
  }

  /// The most entries a record's history may list: far more devices (and app
  /// extensions, and reinstalls, each with an id of its own) than one person has.
  static let maximumHistoryEntries = 1_024

  /// The record as the store holds it: four fields, and the foreign value's name when
  /// it was made over one.
  var encoded: PropertyListValue {
    let content: PropertyListValue =
      switch content {
      case .value(let value): value
      case .deleted(let date): .date(date)
      }
    let fields: [PropertyListValue] = [
      .string(self.content.value == nil ? Self.tombstoneTag : Self.valueTag), .integer(Int64(generation)),
      .string(origin), content,
    ]
    return .array(fields + (ForeignName.field(madeOver).map { [$0] } ?? []))
  }
}

/// A write's place in one total order that every device computes alike: the generation
/// first (a Lamport counter), then the writing device's id. Two different writes at one
/// generation are thereby never a tie decided by which upload reached the server last.
/// A foreign value, which names no device, has the empty origin: it sorts below every
/// Zephyr write of its generation.
struct Stamp: Comparable, Hashable, Sendable {
  var generation: UInt64
  var origin: String

  static func < (lhs: Stamp, rhs: Stamp) -> Bool {
    (lhs.generation, lhs.origin) < (rhs.generation, rhs.origin)
  }

  /// The stamp an agreed state is published again under: its own, or for a foreign value
  /// (the empty origin, which no record may carry) `deviceID`'s at the same generation.
  func republished(by deviceID: String) -> Stamp {
    Stamp(generation: max(generation, 1), origin: origin.isEmpty ? deviceID : origin)
  }
}

/// Logical generations: Lamport counters, never wall-clock time.
enum Generation {
  /// The largest generation Zephyr reads or writes (2^53, exact in a `Double`). A record
  /// claiming more is absurd and refused, so `+ 1` can never overflow.
  static let maximum: UInt64 = 1 << 53

  /// The largest step a record may take above the generation this device agreed on
  /// (2^40). No device makes that many edits between two syncs; a record that claims to
  /// is forged, and taking it would pin the key: nothing could ever be written above it.
  static let maximumJump: UInt64 = 1 << 40

  /// Why a record's generation is not believable next to the agreed one, or `nil`.
  static func implausibility(of generation: UInt64, agreed: UInt64) -> String? {
    generation > agreed + maximumJump
      ? "generation \(generation) jumps more than 2^40 above the agreed \(agreed)" : nil
  }

  /// `value + 1`, held at ``maximum``.
  static func next(after value: UInt64) -> UInt64 {
    min(value, maximum - 1) + 1
  }
}

/// What the store holds for a key, as the reconciler sees it.
enum RemoteState: Sendable, Equatable {
  /// The store has no value for the key. Absence tells nothing: it is never a delete.
  case absent
  /// A valid last-writer-wins record (`z1`), stored plain or compressed
  /// (``CompressedRecord``).
  case record(SyncRecord)
  /// A valid record of a key merged by a strategy (`z2`): its whole merge state; stored
  /// plain or compressed.
  case replica(ReplicaRecord)
  /// A value that is not a record: written by Zephyr 4 or by app code directly.
  case foreign(PropertyListValue)
  /// Record-shaped but broken; treated as absent, and reported.
  case malformed(reason: String)
  /// A compressed record (``CompressedRecord``) that cannot be opened; treated as
  /// absent, and reported.
  case unreadableCompressed(reason: String)
  /// A record of a newer format than this Zephyr understands; left alone, and reported.
  case unsupported(version: String)

  /// Classifies a raw store value.
  init(storeValue: PropertyListValue?) {
    guard let storeValue else {
      self = .absent
      return
    }
    guard case .array(var fields) = storeValue, case .string(let tag)? = fields.first,
      let version = RemoteState.formatVersion(ofTag: tag)
    else {
      self = .foreign(storeValue)
      return
    }
    // The writer's time, when it measures delivery delay, is no part of the record.
    if SentTime.carries(fields) { fields.removeLast() }
    switch version {
    case SyncRecord.formatVersion:
      self = RemoteState.decode(tag: tag, fields: fields)
    case CompressedRecord.formatVersion where tag == CompressedRecord.tag:
      self = RemoteState.open(fields)
    case ReplicaRecord.formatVersion where tag == ReplicaRecord.tag:
      switch ReplicaRecord.decode(fields) {
      case .success(let record): self = .replica(record)
      case .failure(let error) where error.unknownKind != nil: self = .unsupported(version: "\(tag) \(error.reason)")
      case .failure(let error): self = .malformed(reason: error.reason)
      }
    default:
      self = .unsupported(version: tag)
    }
  }

  /// The record inside a compressed record's envelope, classified as a plain one would
  /// be; a value inside that is not a record cannot be read.
  private static func open(_ fields: [PropertyListValue]) -> RemoteState {
    switch CompressedRecord.open(fields) {
    case .failure(let problem):
      return .unreadableCompressed(reason: problem.text)
    case .success(let record):
      let inner = RemoteState(storeValue: record)
      if case .foreign = inner { return .unreadableCompressed(reason: "decompressed value is not a Zephyr record") }
      return inner
    }
  }

  /// `"z1"` → 1, `"z12d"` → 12; `nil` when the tag is not a record tag.
  private static func formatVersion(ofTag tag: String) -> Int? {
    var body = Substring(tag)
    guard body.first == "z" else { return nil }
    body = body.dropFirst()
    if body.last == "d" { body = body.dropLast() }
    guard !body.isEmpty, body.count <= 6, body.allSatisfy(\.isASCII), body.allSatisfy(\.isNumber)
    else { return nil }
    return Int(body)
  }

  private static func decode(tag: String, fields: [PropertyListValue]) -> RemoteState {
    guard fields.count == 4 || fields.count == 5 else {
      return .malformed(reason: "record has \(fields.count) fields, expected 4 or 5")
    }
    var madeOver: [ForeignName] = []
    if fields.count == 5 {
      guard let names = ForeignName.names(field: fields[4]) else {
        return .malformed(reason: "fifth field is not the names of 1 to \(ForeignName.maximumNamed) foreign values")
      }
      madeOver = names
    }
    let generation: UInt64
    switch fields[1] {
    case .integer(let value) where value >= 1 && UInt64(value) <= Generation.maximum:
      generation = UInt64(value)
    case .integer(let value):
      return .malformed(reason: "generation \(value) out of range 1...\(Generation.maximum)")
    case .unsignedInteger(let value):
      return .malformed(reason: "generation \(value) out of range 1...\(Generation.maximum)")
    default:
      return .malformed(reason: "generation is not an integer")
    }
    guard case .string(let origin) = fields[2], !origin.isEmpty,
      origin.count <= SyncRecord.maximumOriginLength
    else {
      return .malformed(reason: "origin is not a short string")
    }
    let content: SyncRecord.Content
    if tag == SyncRecord.tombstoneTag {
      guard case .date(let date) = fields[3] else {
        return .malformed(reason: "tombstone without a deletion date")
      }
      content = .deleted(date)
    } else {
      content = .value(fields[3])
    }
    let record = SyncRecord(generation: generation, origin: origin, content: content, madeOver: madeOver)
    return .record(record)
  }
}

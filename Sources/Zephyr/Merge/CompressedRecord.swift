import Foundation

/// A record stored compressed: the envelope of a key declared compressed
/// (``SyncConfiguration/compressedKeys``, or a ``SyncKey`` made with `compressed: true`).
///
/// ```
/// ["z3", <raw DEFLATE of the binary property list of the plain record>]
/// ```
///
/// 1. the format tag `z3`;
/// 2. a `Data`: the record as it would be stored plain (a `z1` record, or a `z2` record
///    of a key merged by a strategy), written as a binary property list (`bplist00`) and
///    compressed as one raw DEFLATE stream (RFC 1951: no zlib or gzip header, no
///    checksum; see ``Deflate``).
///
/// Every reader opens it, whatever it declares: a key's compression is the writer's
/// choice, stored with the record. The envelope is refused (``RemoteState/unreadableCompressed(reason:)``,
/// read as absent) when the stream is not raw DEFLATE, when it inflates to more than the
/// store's 1 MB (no record larger than the store is ever compressed), when it inflates
/// to anything but a binary property list, or when that is not a record (an envelope
/// inside an envelope included). A newer format inside it is left alone, as outside.
///
/// Zephyr builds from before this format read the tag as "format 3, newer than this
/// Zephyr" and leave the key alone, locally and in the store: they never take the
/// envelope for a value.
///
/// A record is stored in an envelope only when the envelope is smaller, by the store's
/// accounting (binary-plist bytes); tombstones are always plain.
enum CompressedRecord {
  static let tag = "z3"
  static let formatVersion = 3

  /// What compressing a record came to.
  enum Outcome: Equatable {
    /// The envelope, with the binary-plist sizes of the plain record and of the envelope.
    case compressed(PropertyListValue, plainBytes: Int, storedBytes: Int)
    /// Store the record plain, for this reason.
    case plain(reason: String)
  }

  /// The envelope of `record` when it is smaller than `record`; else why not.
  static func compress(_ record: PropertyListValue) -> Outcome {
    let plainBytes = record.estimatedBinaryPlistSize
    let bytes: Data
    switch serialize(record) {
    case .success(let serialized): bytes = serialized
    case .failure(let reason): return .plain(reason: reason.text)
    }
    let stream: Data
    do {
      stream = try Deflate.compress(bytes)
    } catch {
      return .plain(reason: "compression failed (\(error))")
    }
    let envelope = PropertyListValue.array([.string(tag), .data(stream)])
    let storedBytes = envelope.estimatedBinaryPlistSize
    guard storedBytes < plainBytes else {
      return .plain(reason: "compressed, it would take \(storedBytes) bytes, not fewer than its \(plainBytes)")
    }
    return .compressed(envelope, plainBytes: plainBytes, storedBytes: storedBytes)
  }

  /// The envelope of `record`, whether or not it is smaller; `nil` when the record cannot
  /// be compressed readably (over the store's 1 MB once serialized).
  static func envelope(of record: PropertyListValue) -> PropertyListValue? {
    guard case .success(let bytes) = serialize(record), let stream = try? Deflate.compress(bytes) else { return nil }
    return .array([.string(tag), .data(stream)])
  }

  /// Why a record could not be serialized for compression.
  struct Problem: Error {
    var text: String
  }

  /// The record as a binary property list, when a reader will inflate it: at most the
  /// store's 1 MB.
  private static func serialize(_ record: PropertyListValue) -> Result<Data, Problem> {
    let bytes: Data
    do {
      bytes = try PropertyListSerialization.data(fromPropertyList: record.foundationValue, format: .binary, options: 0)
    } catch {
      return .failure(Problem(text: "not serializable as a binary property list (\(error.localizedDescription))"))
    }
    guard bytes.count <= Deflate.storeLimit else {
      return .failure(Problem(text: "\(bytes.count) bytes plain, more than a reader inflates (\(Deflate.storeLimit))"))
    }
    return .success(bytes)
  }

  /// The plain record inside an envelope's fields (`fields[0]` is the tag): a record-
  /// shaped value, not yet classified; or why it cannot be read.
  static func open(_ fields: [PropertyListValue]) -> Result<PropertyListValue, Problem> {
    guard fields.count == 2, case .data(let stream) = fields[1] else {
      return .failure(Problem(text: "envelope is not a tag and one data payload"))
    }
    let bytes: Data
    do {
      bytes = try Deflate.decompress(stream, limit: Deflate.storeLimit)
    } catch {
      return .failure(Problem(text: error.description))
    }
    guard bytes.starts(with: binaryPlistMagic),
      let decoded = try? PropertyListSerialization.propertyList(from: bytes, options: [], format: nil),
      let record = PropertyListValue(bridging: decoded)
    else {
      return .failure(Problem(text: "decompressed bytes are not a binary property list"))
    }
    guard !isEnvelope(record) else {
      return .failure(Problem(text: "a compressed record inside a compressed record"))
    }
    return .success(record)
  }

  /// Whether `value` is an envelope (by its tag alone, without opening it).
  static func isEnvelope(_ value: PropertyListValue?) -> Bool {
    guard case .array(let fields)? = value, case .string(let first)? = fields.first else { return false }
    return first == tag
  }

  /// `bplist00`: the header of a binary property list, the only kind a payload may be
  /// (XML and OpenStep plists read differently, or not at all, across platforms).
  private static let binaryPlistMagic = Data("bplist00".utf8)
}

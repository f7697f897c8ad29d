import Foundation

/// The limits a key-value sync store enforces, which Zephyr checks before every write.
///
/// A store declares its own (``KeyValueSyncStore/limits``), and a coordinator checks
/// against them unless ``SyncConfiguration/limits`` is set. See <doc:LimitsAndDiagnostics>.
public struct StoreLimits: Sendable, Hashable {
  /// Total bytes: every key's UTF-8 bytes plus every value's binary-plist size.
  /// `Int.max`: no cap.
  public var maximumTotalBytes: Int
  /// Number of keys. `Int.max`: no cap.
  public var maximumKeyCount: Int
  /// UTF-8 bytes in one key.
  public var maximumKeyBytes: Int
  /// Bytes of one key's record: the key's UTF-8 bytes plus the value's binary-plist size.
  /// A record over it is refused by name (``RefusalReason/overQuota(needed:available:)``,
  /// with `available` this limit), whatever room the store has left.
  public var maximumRecordBytes: Int

  /// Creates limits. `maximumRecordBytes` defaults to no cap beyond the total.
  public init(maximumTotalBytes: Int, maximumKeyCount: Int, maximumKeyBytes: Int, maximumRecordBytes: Int = .max) {
    self.maximumTotalBytes = maximumTotalBytes
    self.maximumKeyCount = maximumKeyCount
    self.maximumKeyBytes = maximumKeyBytes
    self.maximumRecordBytes = maximumRecordBytes
  }

  /// The iCloud key-value store's documented limits: 1 MB, 1,024 keys, 64-byte keys (a
  /// single value is bounded by the 1 MB total).
  public static let iCloud = StoreLimits(maximumTotalBytes: 1_048_576, maximumKeyCount: 1_024, maximumKeyBytes: 64)

  /// A CloudKit store's limits (`CloudKitStore` and `ZephyrTesting.SimulatedCloudKit`):
  /// no total and no key-count cap (the private database counts against the user's iCloud
  /// storage, and a full account is reported as a quota violation), 1,024-byte key names,
  /// and 1,000,000 bytes a record.
  ///
  /// CloudKit takes at most 1 MB of fields in one record; the rest of the megabyte is left
  /// for the record's own fields (its key name, type and system fields). A value whose
  /// record does not fit is refused by name and kept locally, like any refused key; split
  /// it into several keys. Key names are stored in the record, and its record name is
  /// derived from them, so CloudKit's own
  /// 255-character record-name rule does not apply to them; Zephyr caps them at 1,024
  /// bytes to keep every record's overhead small.
  public static let cloudKit = StoreLimits(
    maximumTotalBytes: .max, maximumKeyCount: .max, maximumKeyBytes: 1_024, maximumRecordBytes: 1_000_000)
}

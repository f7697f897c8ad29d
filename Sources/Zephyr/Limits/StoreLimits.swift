import Foundation

/// The limits a key-value sync store enforces, which Zephyr checks before every write.
///
/// See <doc:LimitsAndDiagnostics>.
public struct StoreLimits: Sendable, Hashable {
  /// Total bytes: every key's UTF-8 bytes plus every value's binary-plist size.
  public var maximumTotalBytes: Int
  /// Number of keys.
  public var maximumKeyCount: Int
  /// UTF-8 bytes in one key.
  public var maximumKeyBytes: Int

  /// Creates limits.
  public init(maximumTotalBytes: Int, maximumKeyCount: Int, maximumKeyBytes: Int) {
    self.maximumTotalBytes = maximumTotalBytes
    self.maximumKeyCount = maximumKeyCount
    self.maximumKeyBytes = maximumKeyBytes
  }

  /// The iCloud key-value store's documented limits: 1 MB, 1,024 keys, 64-byte keys.
  public static let iCloud = StoreLimits(maximumTotalBytes: 1_048_576, maximumKeyCount: 1_024, maximumKeyBytes: 64)
}

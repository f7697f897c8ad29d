import Foundation

/// Which keys Zephyr never syncs, whatever the app asks.
enum KeyPolicy {
  /// Prefixes of keys that the system and frameworks write into every app's domain.
  static let systemPrefixes = ["Apple", "NS", "com.apple.", "WebKit", "METAL_", "INNext", "PKKeychain", "AKLast"]
  /// Zephyr's own keys, of every version, live under this prefix.
  static let bookkeepingPrefix = "Zephyr."
  /// Zephyr 4's whole-store timestamp; removed from the store, never synced.
  static let legacySyncKey = "ZephyrSyncKey"

  /// The reason `key` is never synced, or `nil` when it may be.
  static func exclusion(of key: String) -> RefusalReason? {
    if key == legacySyncKey || key.hasPrefix(bookkeepingPrefix) { return .bookkeepingKey }
    if systemPrefixes.contains(where: key.hasPrefix) { return .systemKey }
    return nil
  }

  /// The reason `key` cannot be written to a store with `limits`, or `nil`.
  static func refusal(of key: String, limits: StoreLimits) -> RefusalReason? {
    if let exclusion = exclusion(of: key) { return exclusion }
    let bytes = key.utf8.count
    if bytes > limits.maximumKeyBytes { return .keyTooLong(bytes: bytes, limit: limits.maximumKeyBytes) }
    return nil
  }
}

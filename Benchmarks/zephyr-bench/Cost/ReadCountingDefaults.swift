import Foundation
import Zephyr

/// `UserDefaults` that counts `object(forKey:)` calls per key, so that the bench reports
/// the reads an operation makes as measured, not as declared.
final class ReadCountingDefaults: UserDefaults {
  private let counts = Locked<[String: Int]>([:])

  override func object(forKey defaultName: String) -> Any? {
    counts.withLock { $0[defaultName, default: 0] += 1 }
    return super.object(forKey: defaultName)
  }

  /// The `object(forKey:)` calls for `key` so far.
  func reads(of key: String) -> Int { counts.withLock { $0[key] ?? 0 } }
}

import Foundation
import Zephyr

/// `UserDefaults` that counts `object(forKey:)` calls per key: how tests and
/// `zephyr-bench` tell how many times an operation read a value (on Linux each read of a
/// `Data` value copies it).
///
/// ```swift
/// let defaults = ReadCountingDefaults(suiteName: "counted")!
/// let before = defaults.reads(of: "read")
/// // … an inbound change …
/// #expect(defaults.reads(of: "read") - before == 1)
/// ```
public final class ReadCountingDefaults: UserDefaults {
  private let counts = Locked<[String: Int]>([:])

  /// Counts the call, then answers as `UserDefaults` does.
  public override func object(forKey defaultName: String) -> Any? {
    counts.withLock { $0[defaultName, default: 0] += 1 }
    return super.object(forKey: defaultName)
  }

  /// The `object(forKey:)` calls for `key` so far.
  public func reads(of key: String) -> Int { counts.withLock { $0[key] ?? 0 } }
}

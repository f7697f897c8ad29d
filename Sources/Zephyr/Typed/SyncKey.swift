import Foundation

/// A synced `UserDefaults` key with its type and default value.
///
/// Declare keys once, as static properties, and use them with a coordinator, the
/// ``Zephyr/Zephyr`` facade, ``SyncedValue`` or SwiftUI's `@SyncedDefault`:
///
/// ```swift
/// enum Settings {
///   static let theme = SyncKey<String>("theme", default: "light")
///   static let highScore = SyncKey<Int>("highScore", default: 0, merge: .max)
/// }
///
/// Zephyr[Settings.theme] = "dark"    // writes UserDefaults, pushes this key
/// Zephyr[Settings.theme]             // "dark"
/// ```
///
/// The key's ``name`` is both the `UserDefaults` key and the store key, so code that
/// reads `UserDefaults.standard.string(forKey: "theme")` or `@AppStorage("theme")` sees
/// the same value, and a read through the key returns what those return (a registered
/// default included). A key is monitored from its first use with a coordinator: changes
/// from other devices are applied as they arrive, and a value that arrived before the
/// first use is pulled then.
public struct SyncKey<Value: SyncValue>: Sendable {
  /// The `UserDefaults` key, and the store key it syncs under.
  public let name: String
  /// What a read returns while `UserDefaults` has no value for the key (none stored,
  /// registered or passed as a launch argument), or one of another type. Never written:
  /// a default is not a setting, and is never uploaded.
  public let defaultValue: Value
  /// What the key does when two devices changed it to different values; see
  /// ``MergeStrategy``. An entry for the same key in
  /// ``SyncConfiguration/mergeStrategies`` takes precedence, and a record in the store
  /// names the strategy every device merges it by (see <doc:MergeSemantics>).
  public let merge: MergeStrategy
  /// The most elements a `.set` key keeps (``Merge/set(capacity:)``); `nil` for no limit.
  /// An entry for the same key in ``SyncConfiguration/setCapacities`` takes precedence.
  public let mergeCapacity: Int?

  /// Creates a key.
  ///
  /// ```swift
  /// static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)
  /// ```
  ///
  /// - Parameters:
  ///   - name: The `UserDefaults` key, at most 64 UTF-8 bytes (longer keys are written
  ///     locally but refused for syncing, and listed in ``SyncCoordinator/status``).
  ///   - defaultValue: The value read while the key holds none.
  ///   - merge: The merge strategy, ``MergeStrategy/lastWriterWins`` by default. Only
  ///     strategies that can merge `Value` compile (see ``Merge``).
  public init(_ name: String, default defaultValue: Value, merge: Merge = .lastWriterWins) {
    self.name = name
    self.defaultValue = defaultValue
    self.merge = merge.strategy
    self.mergeCapacity = merge.capacity
  }

  /// Creates a key of an optional type whose default is `nil`.
  ///
  /// ```swift
  /// static let nickname = SyncKey<String?>("nickname")
  /// coordinator[Settings.nickname] = nil    // removes the key, on every device
  /// ```
  public init<Wrapped>(_ name: String, merge: Merge = .lastWriterWins) where Value == Wrapped? {
    self.init(name, default: nil, merge: merge)
  }

  /// The value `stored` holds for this key: decoded, or the default when it is absent or
  /// of another type.
  func value(from stored: PropertyListValue?) -> Value {
    stored.flatMap(Value.init(propertyList:)) ?? defaultValue
  }
}

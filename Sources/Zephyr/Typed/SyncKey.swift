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
  /// What the key does when two devices changed it to different values: the `merge:` it
  /// was created with, its ``Merge/strategy`` and, for `.set(capacity:)`, its
  /// ``Merge/capacity``. Entries for the same key in ``SyncConfiguration/mergeStrategies``
  /// and ``SyncConfiguration/setCapacities`` take precedence, and a record in the store
  /// names the strategy every device merges it by (see <doc:MergeSemantics>).
  public let merge: Merge
  /// Whether the key's record is stored compressed in the store (`UserDefaults` keeps
  /// the plain value); see ``init(_:default:compressed:)``. A coordinator compresses the
  /// key from its first use, beside the keys of ``SyncConfiguration/compressedKeys``
  /// (which it leaves as the app set it); before that (a `sync()` at launch) the record
  /// is written plain. List the key there too to compress it from launch.
  public let isCompressed: Bool

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
    self.init(name, default: defaultValue, merge: merge, compressed: false)
  }

  /// Creates a key whose record is stored compressed: for a large value, such as a few
  /// hundred small `Codable` records.
  ///
  /// ```swift
  /// static let starred = SyncKey<[Starred]>("starred", default: [], compressed: true)
  /// ```
  ///
  /// Only the store's copy is compressed (raw DEFLATE of the record's binary property
  /// list): `UserDefaults` keeps the plain value, so `@AppStorage("starred")` and
  /// `UserDefaults` read it as before. A record is stored compressed only when that makes
  /// it smaller; ``SyncCoordinator/status`` shows the bytes of each key's value and of its
  /// stored record (``SyncStatus/keySizes``). Every device reads a compressed record,
  /// whether or not it declares the key compressed, on every platform; a Zephyr build
  /// from before compressed records leaves the key alone (see
  /// <doc:LimitsAndDiagnostics#Compressed-keys>). The string-keyed form is
  /// ``SyncConfiguration/compressedKeys``.
  ///
  /// - Parameters:
  ///   - name: The `UserDefaults` key and store key (see ``init(_:default:merge:)``).
  ///   - defaultValue: The value read while the key holds none.
  ///   - compressed: Whether the record is stored compressed.
  public init(_ name: String, default defaultValue: Value, compressed: Bool) {
    self.init(name, default: defaultValue, merge: .lastWriterWins, compressed: compressed)
  }

  /// Creates a key merged by a strategy whose record is stored compressed: the whole
  /// merge state is compressed, so every strategy works as it does uncompressed.
  ///
  /// ```swift
  /// static let tags = SyncKey<[String]>("tags", default: [], merge: .set, compressed: true)
  /// ```
  ///
  /// See ``init(_:default:compressed:)`` and ``init(_:default:merge:)``.
  public init(_ name: String, default defaultValue: Value, merge: Merge, compressed: Bool) {
    self.name = name
    self.defaultValue = defaultValue
    self.merge = merge
    self.isCompressed = compressed
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

  /// What the key declares, as the coordinator keeps it from the key's first use.
  var declaration: KeyDeclaration {
    KeyDeclaration(strategy: merge.strategy, capacity: merge.capacity, isCompressed: isCompressed)
  }
}

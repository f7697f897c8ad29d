import Foundation

extension SyncKey {
  /// The merge strategies that apply to the key's `Value`: a strategy that cannot merge
  /// it does not compile.
  ///
  /// ```swift
  /// SyncKey<[String]>("favorites", default: [], merge: .set)      // compiles
  /// SyncKey<Int>("highScore", default: 0, merge: .max)            // compiles
  /// SyncKey<Data>("blob", default: Data(), merge: .set)           // error: Data is no collection
  /// SyncKey<[String: Int]>("map", default: [:], merge: .max)      // error: nothing to compare
  /// ```
  ///
  /// `.lastWriterWins` and `.custom` apply to every value; `.max` and `.min` to
  /// ``ComparableSyncValue`` types (numbers, strings, dates); `.set` and `.union` to
  /// ``SetSyncValue`` types (arrays); `.dictionary` to ``KeyedSyncValue`` types
  /// (`[String: …]` dictionaries, and `Codable` structs that declare it, merged per
  /// field). See ``MergeStrategy`` for what each does.
  public struct Merge: Sendable {
    /// The strategy, as the string-keyed API names it.
    public let strategy: MergeStrategy

    /// The default: `sync()` keeps the local value, an inbound store event takes the
    /// remote one. See ``MergeStrategy/lastWriterWins``.
    public static var lastWriterWins: Self { Self(strategy: .lastWriterWins) }

    /// Your own rule; see ``MergeStrategy/custom(_:)``.
    public static func custom(_ resolver: @escaping ConflictResolver) -> Self {
      Self(strategy: .custom(resolver))
    }
  }
}

extension SyncKey.Merge where Value: ComparableSyncValue {
  /// The largest of the concurrent values; see ``MergeStrategy/max``.
  public static var max: Self { Self(strategy: .max) }
  /// The smallest of the concurrent values; see ``MergeStrategy/min``.
  public static var min: Self { Self(strategy: .min) }
}

extension SyncKey.Merge where Value: SetSyncValue {
  /// The elements as a set: adds and removals of every device survive; see
  /// ``MergeStrategy/set``.
  public static var set: Self { Self(strategy: .set) }
  /// Every element any device added, kept in the order of their writes; see
  /// ``MergeStrategy/union``.
  public static var union: Self { Self(strategy: .union) }
}

extension SyncKey.Merge where Value: KeyedSyncValue {
  /// Per entry (per field of a `Codable` struct); see ``MergeStrategy/dictionary``.
  public static var dictionary: Self { Self(strategy: .dictionary) }
}

/// A value `.max` and `.min` can merge: ordered numbers, strings and dates.
///
/// `Int`, `Double`, `String`, `Date` and their optionals conform. A `RawRepresentable`
/// type whose raw value conforms may declare it too.
public protocol ComparableSyncValue: SyncValue {}

/// A value `.set` and `.union` can merge: a collection stored as an array.
///
/// Arrays of ``SyncValue`` elements and their optionals conform.
public protocol SetSyncValue: SyncValue {}

/// A value `.dictionary` can merge: stored as a property-list dictionary.
///
/// `[String: …]` dictionaries and their optionals conform. A `Codable` struct is stored as
/// the dictionary of its fields; declare the conformance to merge it per field, so that a
/// field added by a newer app version merges with an older version's edits:
///
/// ```swift
/// struct Layout: Codable, SyncValue, KeyedSyncValue { var columns = 2; var showsBadges = true }
/// static let layout = SyncKey<Layout>("layout", default: Layout(), merge: .dictionary)
/// ```
public protocol KeyedSyncValue: SyncValue {}

extension Int: ComparableSyncValue {}
extension Double: ComparableSyncValue {}
extension String: ComparableSyncValue {}
extension Date: ComparableSyncValue {}
extension Optional: ComparableSyncValue where Wrapped: ComparableSyncValue {}
extension Array: SetSyncValue where Element: SyncValue {}
extension Optional: SetSyncValue where Wrapped: SetSyncValue {}
extension Dictionary: KeyedSyncValue where Key == String, Value: SyncValue {}
extension Optional: KeyedSyncValue where Wrapped: KeyedSyncValue {}
extension PackedSet: SetSyncValue {}

import Foundation

/// What a key does when both sides changed it to different values.
///
/// Every strategy is pure and deterministic, so every device that merges the same two
/// states gets the same result, and the merged value converges like any other write.
/// Set one per key, on a typed key or in the configuration:
///
/// ```swift
/// static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)
/// configuration.mergeStrategies["highScore"] = .max
/// ```
///
/// A strategy that does not apply to the values at hand (`.max` on two strings of which
/// one is deleted, say) falls back to ``lastWriterWins``. See <doc:MergeSemantics>.
public enum MergeStrategy: Sendable {
  /// The default: `sync()` keeps the local value, an inbound store event takes the
  /// remote one (or ``SyncConfiguration/conflictResolver`` decides).
  case lastWriterWins
  /// The larger of two numbers, dates or strings.
  case max
  /// The smaller of two numbers, dates or strings.
  case min
  /// Arrays: every element of the local array, then those of the remote one it lacks.
  case union
  /// Arrays as sets, merged three-way against the last agreed value: an element added on
  /// either side is kept, one removed on either side is removed.
  case set
  /// Dictionaries, merged three-way per entry against the last agreed value: entries
  /// added, changed or removed on either side survive; an entry changed on both sides
  /// keeps the local change in `sync()` and the remote one in an inbound event.
  case dictionary
  /// Your own rule. It runs on the operation's thread with no lock held; calling back
  /// into the coordinator from it is not honoured.
  case custom(ConflictResolver)
}

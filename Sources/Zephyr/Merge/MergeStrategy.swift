import Foundation

/// What a key does when two devices changed it before either saw the other's change.
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
/// A change made after seeing the other device's value is not a conflict, whatever the
/// strategy: it stands. The merge is exact: records of these keys say which writes they
/// include and what they are made of, so a part one device added is kept unless a device
/// that saw it removed it (see <doc:MergeSemantics>).
public enum MergeStrategy: Sendable {
  /// The default: `sync()` keeps the local value, an inbound store event takes the
  /// remote one (or ``SyncConfiguration/conflictResolver`` decides).
  case lastWriterWins
  /// The largest of the concurrent values: numbers, dates or strings. A delete gives way
  /// to a value written alongside it (it removes what its device had seen); values of
  /// other kinds are decided by the later write.
  case max
  /// The smallest of the concurrent values: numbers, dates or strings. A delete gives way
  /// to a value written alongside it (it removes what its device had seen); values of
  /// other kinds are decided by the later write.
  case min
  /// Arrays: every element either side holds, each once (the later state's order first).
  case union
  /// Arrays as sets: an element added on either device stays; one removed by a device
  /// that had seen it goes. A delete of the key removes what its device held.
  case set
  /// Dictionaries, per entry: an entry added, changed or removed on either device stays
  /// so; one changed on both keeps the later write. A delete of the key removes what its
  /// device held.
  case dictionary
  /// Your own rule, applied to the concurrent values in the order of their writes (the
  /// earlier as `local`, the later as `remote`); ``ConflictResolution/usePolicy`` keeps the
  /// later. It must be pure and deterministic: every device folds the same values with
  /// it. It runs on the operation's thread with no lock held; calling back into the
  /// coordinator from it is not honoured.
  case custom(ConflictResolver)
}

extension MergeStrategy {
  /// Whether this is ``set``, the one strategy a capacity applies to.
  var isSet: Bool {
    if case .set = self { true } else { false }
  }
}

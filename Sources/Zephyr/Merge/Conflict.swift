import Foundation

/// Which side wins when both sides changed a key to different values and no resolver
/// decides.
enum MismatchPolicy: Sendable, Equatable {
  /// Keep the local value and push it (what `sync()` does).
  case preferLocal
  /// Take the store's value (what an inbound store event does).
  case preferRemote
}

/// What a ``ConflictResolver`` decides for one key.
public enum ConflictResolution: Sendable, Equatable {
  /// Keep the local state and push it.
  case keepLocal
  /// Take the store's state.
  case keepRemote
  /// Write this value on both sides.
  case merged(PropertyListValue)
  /// Decide as if no resolver were set: `sync()` keeps the local state, an inbound event
  /// takes the remote one. Lets a resolver handle only the keys it knows.
  case usePolicy
}

/// Both sides of a conflict, handed to a ``ConflictResolver``. `nil` means deleted.
///
/// For ``SyncConfiguration/conflictResolver`` the sides are this device's and the
/// store's. For a ``MergeStrategy/custom(_:)`` rule they are two concurrent values in the
/// order of their writes, on whichever device merges them: `local` is the earlier write
/// (perhaps another device's) and `remote` the later, so that every device reaches the
/// same value; ``ConflictResolution/keepLocal`` keeps the earlier.
public struct Conflict: Sendable, Equatable {
  /// The synced key.
  public var key: String
  /// The local value, or `nil` when the key was deleted locally. (In a `.custom` rule,
  /// the earlier of the two writes.)
  public var local: PropertyListValue?
  /// The store's value, or `nil` when the store holds a tombstone. (In a `.custom` rule,
  /// the later of the two writes.)
  public var remote: PropertyListValue?

  /// Creates a conflict, for unit tests of a resolver.
  ///
  /// ```swift
  /// let conflict = Conflict(key: "tags", local: .array([.string("a")]), remote: .array([.string("b")]))
  /// #expect(myResolver(conflict) == .merged(.array([.string("a"), .string("b")])))
  /// ```
  public init(key: String, local: PropertyListValue?, remote: PropertyListValue?) {
    self.key = key
    self.local = local
    self.remote = remote
  }
}

/// Decides a conflict for one key. Should be a pure, fast function. It runs on the
/// thread of the operation, with no lock held; calling back into the coordinator that
/// asks it is not honoured (such a call returns at once with a warning).
public typealias ConflictResolver = @Sendable (Conflict) -> ConflictResolution

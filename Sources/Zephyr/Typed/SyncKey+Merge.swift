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
    /// The most elements a `.set` keeps (see ``set(capacity:)``); `nil` for no limit.
    public let capacity: Int?

    init(strategy: MergeStrategy, capacity: Int? = nil) {
      self.strategy = strategy
      self.capacity = capacity
    }

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

  /// `.set`, keeping the newest `capacity` elements, as a reader trims its history of
  /// read articles. "Newest" is by write: every element carries the write that added it,
  /// and writes are ordered by their logical generation (a write made after seeing
  /// another is always newer than it), then by device id; the elements of one write
  /// (a coalesced batch) are ordered by their stored form (ids by value: the larger
  /// stays).
  ///
  /// ```swift
  /// static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set(capacity: 20_000))
  /// ```
  ///
  /// Every device that merges trims the merged state the same way, and a trim counts as
  /// a removal made by a device that saw what it removed: a trimmed element does not come
  /// back from a device that still held it. A device whose app declares no capacity (an
  /// older version) does not trim, and takes the trims of others. A capacity below 0
  /// counts as 0.
  public static func set(capacity: Int) -> Self { Self(strategy: .set, capacity: Swift.max(0, capacity)) }
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

/// A value `.set` and `.union` can merge: a collection of elements, stored as an array
/// (or, for a ``PackedSet``, as packed ids).
///
/// Arrays of ``SyncValue`` elements, ``PackedSet`` and their optionals conform. The
/// element-level edits (``SyncCoordinator/insert(_:into:)`` and its kin) use its
/// requirements.
public protocol SetSyncValue: SyncValue {
  /// The type of the collection's elements.
  associatedtype SetElement
  /// The empty collection.
  init()
  /// Adds each element the collection does not hold yet.
  mutating func insertElements(_ elements: some Sequence<SetElement>)
  /// Removes every occurrence of each element.
  mutating func removeElements(_ elements: some Sequence<SetElement>)
}

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
extension Array: SetSyncValue where Element: SyncValue {
  /// An array's elements.
  public typealias SetElement = Element

  /// Appends each element whose stored form the array does not hold yet.
  public mutating func insertElements(_ elements: some Sequence<Element>) {
    var held = Set(compactMap { (try? $0.propertyList)??.fingerprint })
    for element in elements {
      guard let stored = (try? element.propertyList) ?? nil, held.insert(stored.fingerprint).inserted else { continue }
      append(element)
    }
  }

  /// Removes every element whose stored form is one of `elements`'.
  public mutating func removeElements(_ elements: some Sequence<Element>) {
    let gone = Set(elements.compactMap { (try? $0.propertyList)??.fingerprint })
    removeAll { element in ((try? element.propertyList) ?? nil).map { gone.contains($0.fingerprint) } ?? false }
  }
}

extension Optional: SetSyncValue where Wrapped: SetSyncValue {
  /// An optional collection's elements are its collection's.
  public typealias SetElement = Wrapped.SetElement

  /// `nil`, the key's missing value.
  public init() { self = nil }

  /// Adds to the collection, creating it when missing.
  public mutating func insertElements(_ elements: some Sequence<Wrapped.SetElement>) {
    var collection = self ?? Wrapped()
    collection.insertElements(elements)
    self = collection
  }

  /// Removes from the collection, when there is one.
  public mutating func removeElements(_ elements: some Sequence<Wrapped.SetElement>) {
    self?.removeElements(elements)
  }
}
extension Dictionary: KeyedSyncValue where Key == String, Value: SyncValue {}
extension Optional: KeyedSyncValue where Wrapped: KeyedSyncValue {}

/// A value whose stored form holds no field it does not know: a typed set writes it as
/// it is (see ``SyncCoordinator/unknownFieldKeeper(_:)``).
protocol KnowsEveryField {}
extension Dictionary: KnowsEveryField where Key == String {}
extension Optional: KnowsEveryField where Wrapped: KnowsEveryField {}
extension PackedSet: SetSyncValue {
  /// A packed set's ids.
  public typealias SetElement = Element

  /// Inserts every id.
  public mutating func insertElements(_ elements: some Sequence<Element>) {
    formUnion(PackedSet(elements))
  }

  /// Removes every id.
  public mutating func removeElements(_ elements: some Sequence<Element>) {
    subtract(PackedSet(elements))
  }
}

/// The value a typed set writes, given the value it sets and a read of the key's value
/// now, made only when needed (see ``SyncCoordinator/unknownFieldKeeper(_:)``).
typealias FieldKeeper = @Sendable (_ set: PropertyListValue?, _ current: () -> PropertyListValue?) -> PropertyListValue?

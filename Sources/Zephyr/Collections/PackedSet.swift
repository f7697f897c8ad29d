import Foundation

/// A set of integer ids stored as one compact `Data` value: sorted, delta-coded, and
/// packed near the fewest bytes that can hold such a set.
///
/// Use it for large id sets (a read history, starred items, blocked users) that a plain
/// array would make large and slow to sync:
///
/// ```swift
/// enum Keys {
///   static let read = SyncKey<PackedSet<UInt32>>("read", default: [])
/// }
///
/// var read: PackedSet<UInt32> = [42, 7]
/// read.insert(1_000)             // (inserted: true, memberAfterInsert: 1000)
/// read.contains(7)               // true: a binary search, nothing decoded
/// Array(read)                    // [7, 42, 1000], always in ascending order
/// ```
///
/// 25,000 random 32-bit ids take about 59 KB in `UserDefaults` and in the store, against
/// 100 KB for 4 bytes an id and several hundred KB for `[Int]`; dense ids (consecutive
/// database keys) take a bit or two each. The stored form is described in the
/// package's `PackedIntegers` encoding (format byte, count, first id, Golomb-coded gaps).
///
/// A `PackedSet` is a value with copy-on-write storage, and its elements are held decoded
/// in ascending order:
/// - ``contains(_:)`` is a binary search: O(log n), no decoding.
/// - ``insert(_:)`` and ``remove(_:)`` are O(n) moves of the elements after the position
///   (microseconds for 25,000 ids); building from a sequence sorts once, O(n log n).
/// - Reading one from its stored form decodes the whole blob once, O(n) (validating
///   every byte); its stored form is the blob it was read from until it is changed, then
///   it is encoded once per ``propertyList`` read, O(n).
///
/// Signed elements are stored in numeric order (their sign bit flipped), so a blob written
/// by a `PackedSet<Int32>` reads as a `PackedSet<Int64>` or `PackedSet<Int8>` whose values
/// fit, and a `PackedSet<UInt32>` blob reads as a `PackedSet<UInt64>`.
///
/// > Important: Elements must fit 64 bits. `Int128` and `UInt128` elements work up to the
/// > 64-bit range; a set holding a wider value cannot be stored, and a typed write of it
/// > is refused as ``RefusalReason/unencodable(_:)``.
///
/// Every standard integer type is `Sendable`, which the set needs to cross threads and to
/// be a ``SyncValue``.
public struct PackedSet<Element: FixedWidthInteger & Sendable>: Sendable {
  /// The elements, ascending and unique. Every change goes through ``replaceElements(_:)``
  /// or clears ``blob`` first.
  var elements: [Element]
  /// The stored form this value was read from, while it is unchanged since; `nil` once
  /// changed, so that the next ``propertyList`` encodes the new elements.
  var blob: Data?

  /// An empty set.
  ///
  /// ```swift
  /// let none = PackedSet<UInt32>()    // the same as `[]`
  /// ```
  public init() {
    elements = []
  }

  /// A set of the elements of `sequence`, duplicates dropped.
  ///
  /// ```swift
  /// let ids = PackedSet<UInt32>([5, 1, 5, 3])   // [1, 3, 5]
  /// ```
  public init<S: Sequence>(_ sequence: S) where S.Element == Element {
    var sorted = Array(sequence)
    if !zip(sorted, sorted.dropFirst()).allSatisfy({ $0 < $1 }) {
      sorted.sort()
      sorted = Self.unique(sorted)
    }
    elements = sorted
  }

  /// A set of ascending, unique elements, taken as they are.
  init(ascending elements: [Element], blob: Data? = nil) {
    self.elements = elements
    self.blob = blob
  }

  /// The number of elements. O(1).
  public var count: Int { elements.count }

  /// Whether the set has no element. O(1).
  public var isEmpty: Bool { elements.isEmpty }

  /// Whether `member` is in the set: a binary search, O(log n), with nothing decoded.
  ///
  /// ```swift
  /// let read: PackedSet<UInt32> = [7, 42]
  /// read.contains(42)    // true
  /// ```
  public func contains(_ member: Element) -> Bool {
    let index = insertionIndex(of: member)
    return index < elements.count && elements[index] == member
  }

  /// The index of the first element not below `member`.
  func insertionIndex(of member: Element) -> Int {
    var low = 0
    var high = elements.count
    while low < high {
      let middle = (low + high) / 2
      if elements[middle] < member { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// Replaces the elements (ascending and unique) and forgets the stored blob.
  mutating func replaceElements(_ ascending: [Element]) {
    elements = ascending
    blob = nil
  }

  /// `sorted` without repeats.
  private static func unique(_ sorted: [Element]) -> [Element] {
    var result: [Element] = []
    result.reserveCapacity(sorted.count)
    for element in sorted where result.last != element { result.append(element) }
    return result
  }
}

extension PackedSet: Sequence {
  /// Iterates the elements in ascending order.
  public typealias Iterator = IndexingIterator<[Element]>

  /// An iterator over the elements, in ascending numeric order.
  ///
  /// ```swift
  /// for id in [9, -2, 4] as PackedSet<Int32> { print(id) }   // -2, 4, 9
  /// ```
  public func makeIterator() -> Iterator { elements.makeIterator() }

  /// The number of elements.
  public var underestimatedCount: Int { elements.count }
}

extension PackedSet: Hashable {
  /// Whether both sets have the same elements, whatever blob each was read from.
  public static func == (lhs: PackedSet, rhs: PackedSet) -> Bool { lhs.elements == rhs.elements }

  /// Hashes the elements.
  public func hash(into hasher: inout Hasher) { hasher.combine(elements) }
}

extension PackedSet: ExpressibleByArrayLiteral {
  /// A set of the listed elements, duplicates dropped.
  ///
  /// ```swift
  /// let ids: PackedSet<UInt32> = [3, 1, 3]   // [1, 3]
  /// ```
  public init(arrayLiteral elements: Element...) {
    self.init(elements)
  }
}

extension PackedSet: CustomStringConvertible {
  /// The elements in ascending order, the first 10 of a larger set with its count:
  /// `PackedSet([1, 3])`, `PackedSet(25000 elements: [4, 90, …])`.
  public var description: String {
    if elements.count <= 10 { return "PackedSet(\(elements))" }
    let head = elements.prefix(10).map { "\($0)" }.joined(separator: ", ")
    return "PackedSet(\(elements.count) elements: [\(head), …])"
  }
}

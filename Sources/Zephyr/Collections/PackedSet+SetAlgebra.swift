extension PackedSet: SetAlgebra {
  /// Inserts `newMember` unless it is already in the set. O(log n) to find its place,
  /// O(n) to make room.
  ///
  /// ```swift
  /// var read: PackedSet<UInt32> = [7]
  /// read.insert(9)    // (inserted: true, memberAfterInsert: 9)
  /// read.insert(9)    // (inserted: false, memberAfterInsert: 9)
  /// ```
  @discardableResult
  public mutating func insert(_ newMember: Element) -> (inserted: Bool, memberAfterInsert: Element) {
    let index = insertionIndex(of: newMember)
    if index < elements.count, elements[index] == newMember { return (false, newMember) }
    blob = nil
    elements.insert(newMember, at: index)
    return (true, newMember)
  }

  /// Removes `member`, returning it, or `nil` when it was not in the set.
  ///
  /// ```swift
  /// var read: PackedSet<UInt32> = [7, 9]
  /// read.remove(7)    // 7
  /// read.remove(8)    // nil
  /// ```
  @discardableResult
  public mutating func remove(_ member: Element) -> Element? {
    let index = insertionIndex(of: member)
    guard index < elements.count, elements[index] == member else { return nil }
    blob = nil
    elements.remove(at: index)
    return member
  }

  /// Inserts `newMember`, returning it when an equal element was already there (integers
  /// that are equal are identical, so nothing else changes), `nil` otherwise.
  @discardableResult
  public mutating func update(with newMember: Element) -> Element? {
    insert(newMember).inserted ? nil : newMember
  }

  /// The elements in either set. O(n + m).
  ///
  /// ```swift
  /// ([1, 2] as PackedSet<UInt32>).union([2, 3])    // [1, 2, 3]
  /// ```
  public func union(_ other: PackedSet) -> PackedSet {
    PackedSet(ascending: Self.merge(elements, other.elements) { $0 || $1 })
  }

  /// The elements in both sets. O(n + m).
  public func intersection(_ other: PackedSet) -> PackedSet {
    PackedSet(ascending: Self.merge(elements, other.elements) { $0 && $1 })
  }

  /// The elements in exactly one of the sets. O(n + m).
  public func symmetricDifference(_ other: PackedSet) -> PackedSet {
    PackedSet(ascending: Self.merge(elements, other.elements) { $0 != $1 })
  }

  /// The elements of this set that are not in `other`. O(n + m).
  public func subtracting(_ other: PackedSet) -> PackedSet {
    PackedSet(ascending: Self.merge(elements, other.elements) { $0 && !$1 })
  }

  /// Adds the elements of `other`.
  public mutating func formUnion(_ other: PackedSet) { self = union(other) }

  /// Keeps only the elements also in `other`.
  public mutating func formIntersection(_ other: PackedSet) { self = intersection(other) }

  /// Keeps the elements in exactly one of the sets.
  public mutating func formSymmetricDifference(_ other: PackedSet) { self = symmetricDifference(other) }

  /// Removes the elements of `other`.
  public mutating func subtract(_ other: PackedSet) { self = subtracting(other) }

  /// Whether every element is in `other`. O(n + m).
  public func isSubset(of other: PackedSet) -> Bool {
    count <= other.count && Self.merge(elements, other.elements) { $0 && !$1 }.isEmpty
  }

  /// Whether no element is in `other`. O(n + m).
  public func isDisjoint(with other: PackedSet) -> Bool {
    Self.merge(elements, other.elements) { $0 && $1 }.isEmpty
  }

  /// One pass over two ascending lists, keeping each value for which `keep(inLeft,
  /// inRight)` holds.
  private static func merge(_ left: [Element], _ right: [Element], keep: (Bool, Bool) -> Bool) -> [Element] {
    var result: [Element] = []
    var i = 0
    var j = 0
    while i < left.count || j < right.count {
      let value: Element
      let inLeft: Bool
      let inRight: Bool
      if j == right.count || (i < left.count && left[i] < right[j]) {
        (value, inLeft, inRight) = (left[i], true, false)
        i += 1
      } else if i == left.count || right[j] < left[i] {
        (value, inLeft, inRight) = (right[j], false, true)
        j += 1
      } else {
        (value, inLeft, inRight) = (left[i], true, true)
        i += 1
        j += 1
      }
      if keep(inLeft, inRight) { result.append(value) }
    }
    return result
  }
}

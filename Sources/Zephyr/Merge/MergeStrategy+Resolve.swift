import Foundation

extension MergeStrategy {
  /// Whether this is ``lastWriterWins``, which needs no merge.
  var isLastWriterWins: Bool {
    if case .lastWriterWins = self { true } else { false }
  }

  /// Whether merging needs the value both sides last agreed on (see ``MergeMemory``).
  var isThreeWay: Bool {
    switch self {
    case .set, .dictionary: true
    default: false
    }
  }

  /// The strategy's name, for the decision log.
  var name: String {
    switch self {
    case .lastWriterWins: "lastWriterWins"
    case .max: "max"
    case .min: "min"
    case .union: "union"
    case .set: "set"
    case .dictionary: "dictionary"
    case .custom: "custom"
    }
  }

  /// Decides a key whose two states differ. Pure and deterministic: any device that
  /// merges the same two states (with the same base) gets the same value. A result equal
  /// to one side is reported as keeping that side, so that no new value is written when
  /// none is needed. ``ConflictResolution/usePolicy`` when the strategy does not apply to
  /// these values (a delete on either side, or values of another kind).
  func resolve(_ conflict: Conflict, base: PropertyListValue?, policy: MismatchPolicy) -> ConflictResolution {
    switch self {
    case .lastWriterWins:
      return .usePolicy
    case .custom(let resolver):
      return resolver(conflict)
    case .max, .min, .union, .set, .dictionary:
      guard let local = conflict.local, let remote = conflict.remote,
        let merged = merge(local, remote, base: base, policy: policy)
      else { return .usePolicy }
      return Self.resolution(merged, local: local, remote: remote)
    }
  }

  private func merge(
    _ local: PropertyListValue, _ remote: PropertyListValue, base: PropertyListValue?, policy: MismatchPolicy
  ) -> PropertyListValue? {
    switch self {
    case .max, .min:
      guard let order = Self.order(local, remote) else { return nil }
      let localWins = order == .orderedSame ? Self.tieBreak(local, remote) : (order == .orderedDescending) == isMax
      return localWins ? local : remote
    case .union:
      guard case .array(let mine) = local, case .array(let theirs) = remote else { return nil }
      return .array(Self.unique(mine + theirs))
    case .set:
      guard case .array(let mine) = local, case .array(let theirs) = remote else { return nil }
      var ancestor: [PropertyListValue] = []
      if case .array(let items)? = base { ancestor = items }
      let kept = mine.filter { theirs.contains($0) || !ancestor.contains($0) }
      let added = theirs.filter { !mine.contains($0) && !ancestor.contains($0) }
      return .array(Self.unique(kept + added))
    case .dictionary:
      guard case .dictionary(let mine) = local, case .dictionary(let theirs) = remote else { return nil }
      var ancestor: [String: PropertyListValue] = [:]
      if case .dictionary(let entries)? = base { ancestor = entries }
      var merged: [String: PropertyListValue] = [:]
      for key in Set(mine.keys).union(theirs.keys) {
        let (left, right, old) = (mine[key], theirs[key], ancestor[key])
        let entry: PropertyListValue? =
          left == right ? left : left == old ? right : right == old ? left : policy == .preferLocal ? left : right
        merged[key] = entry
      }
      return .dictionary(merged)
    case .lastWriterWins, .custom:
      return nil
    }
  }

  private var isMax: Bool {
    if case .max = self { true } else { false }
  }

  /// `merged` as keeping one side when it is that side's value. Two arrays that hold the
  /// same elements in another order are one set: the same one of them is kept on every
  /// device, so that two devices never hand the order back and forth.
  private static func resolution(
    _ merged: PropertyListValue, local: PropertyListValue, remote: PropertyListValue
  ) -> ConflictResolution {
    if case .array(let items) = merged, case .array(let theirs) = remote, case .array(let mine) = local,
      Set(items) == Set(theirs), Set(items) == Set(mine)
    {
      return tieBreak(local, remote) ? .keepLocal : .keepRemote
    }
    if merged == remote { return .keepRemote }
    if merged == local { return .keepLocal }
    return .merged(merged)
  }

  /// Removes repeated elements, keeping the first of each.
  private static func unique(_ items: [PropertyListValue]) -> [PropertyListValue] {
    var seen = Set<PropertyListValue>()
    return items.filter { seen.insert($0).inserted }
  }

  /// How two numbers, dates or strings compare; `nil` for values of other kinds.
  private static func order(_ lhs: PropertyListValue, _ rhs: PropertyListValue) -> ComparisonResult? {
    func compare<T: Comparable>(_ left: T, _ right: T) -> ComparisonResult {
      left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
    }
    switch (lhs, rhs) {
    case (.string(let left), .string(let right)): return compare(left, right)
    case (.date(let left), .date(let right)): return compare(left, right)
    default:
      guard let left = number(lhs), let right = number(rhs) else { return nil }
      return compare(left, right)
    }
  }

  private static func number(_ value: PropertyListValue) -> Double? {
    switch value {
    case .integer(let number): Double(number)
    case .unsignedInteger(let number): Double(number)
    case .double(let number): number
    default: nil
    }
  }

  /// Whether `local` wins a tie: the larger fingerprint, the same on every device.
  private static func tieBreak(_ local: PropertyListValue, _ remote: PropertyListValue) -> Bool {
    local.fingerprint.rawValue >= remote.fingerprint.rawValue
  }
}

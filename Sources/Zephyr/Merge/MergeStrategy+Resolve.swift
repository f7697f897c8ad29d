import Foundation

extension MergeStrategy {
  /// Whether this is ``lastWriterWins``, which needs no merge.
  var isLastWriterWins: Bool {
    if case .lastWriterWins = self { true } else { false }
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

  /// Decides between two values of a `.max`, `.min` or `.custom` key (two concurrent
  /// siblings). Pure and deterministic. ``ConflictResolution/usePolicy``
  /// when the strategy does not apply to these values (a delete, values of another kind):
  /// the later write's value is then kept. The collections (`.union`, `.set`,
  /// `.dictionary`) merge whole states instead (``ReplicaState/joined(with:)``).
  func resolve(_ conflict: Conflict) -> ConflictResolution {
    switch self {
    case .lastWriterWins, .union, .set, .dictionary:
      return .usePolicy
    case .custom(let resolver):
      return resolver(conflict)
    case .max, .min:
      guard let local = conflict.local, let remote = conflict.remote, let order = Self.order(local, remote)
      else { return .usePolicy }
      let localWins = order == .orderedSame ? Self.tieBreak(local, remote) : (order == .orderedDescending) == isMax
      return localWins ? .keepLocal : .keepRemote
    }
  }

  private var isMax: Bool {
    if case .max = self { true } else { false }
  }

  /// How two numbers, dates or strings compare; `nil` for values of other kinds. Integers
  /// compare exactly (as `Double`, two above 2^53 could look equal); a `Double` against
  /// an integer compares as `Double`.
  private static func order(_ lhs: PropertyListValue, _ rhs: PropertyListValue) -> ComparisonResult? {
    func compare<T: Comparable>(_ left: T, _ right: T) -> ComparisonResult {
      left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
    }
    switch (lhs, rhs) {
    case (.string(let left), .string(let right)): return compare(left, right)
    case (.date(let left), .date(let right)): return compare(left, right)
    case (.integer(let left), .integer(let right)): return compare(left, right)
    case (.unsignedInteger(let left), .unsignedInteger(let right)): return compare(left, right)
    case (.integer(let left), .unsignedInteger(let right)):
      return left < 0 ? .orderedAscending : compare(UInt64(left), right)
    case (.unsignedInteger(let left), .integer(let right)):
      return right < 0 ? .orderedDescending : compare(left, UInt64(right))
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

import Foundation

@testable import Zephyr

/// A merge strategy a scenario gives one of its keys, with the values its steps write
/// there and how a value names the writes it holds.
///
/// Values carry their writes' ids, so that the checker can tell what a merged value is
/// made of: `.set` and `.union` keys hold arrays of elements `e:<write>:<n>`, `.dictionary`
/// keys entries `v:<write>:<entry>`, `.max` and `.min` keys integers unique to their
/// write, `.custom` keys tagged strings (the longer one wins a conflict).
enum ScenarioStrategy: String, Sendable, CaseIterable, CustomStringConvertible {
  case set, union, max, min, dictionary, custom

  var description: String { "." + rawValue }

  var merge: MergeStrategy {
    switch self {
    case .set: .set
    case .union: .union
    case .max: .max
    case .min: .min
    case .dictionary: .dictionary
    case .custom: .custom(Self.longerWins)
    }
  }

  /// The custom rule: the longer string wins, then the larger one; anything else is left
  /// to the policy. Symmetric, so every device decides alike.
  static let longerWins: ConflictResolver = { conflict in
    guard case .string(let mine)? = conflict.local, case .string(let theirs)? = conflict.remote else {
      return .usePolicy
    }
    if mine.count != theirs.count { return mine.count > theirs.count ? .keepLocal : .keepRemote }
    return mine >= theirs ? .keepLocal : .keepRemote
  }

  /// Whether the checker looks at parts of the value (elements, entries) rather than at
  /// whole writes.
  var isCollection: Bool {
    self == .set || self == .union || self == .dictionary
  }

  static let entryNames = ["a", "b", "c", "d", "e", "f"]

  /// The value write `id` (the scenario's step `index`) writes, from `seed`, over the
  /// device's current local value `current`: a change a person would make to it.
  func value(id: String, index: Int, seed: UInt64, current: PropertyListValue?) -> PropertyListValue {
    var random = SeededGenerator(seed: seed)
    switch self {
    case .set, .union:
      var items = Self.items(current).filter { _ in Int.random(in: 0..<4, using: &random) > 0 }
      let added = Int.random(in: items.isEmpty ? 1...2 : 0...2, using: &random)
      items += (0..<added).map { .string("e:\(id):\($0)") }
      if items == Self.items(current) { items.append(.string("e:\(id):\(added)")) }
      // A person also reorders (drawn apart, so the elements above stay what each seed
      // drew): one write in four moves an element of the current value and adds nothing,
      // one in four puts what it adds first.
      var order = SeededGenerator(seed: seed ^ 0x0_0DDE_0DDE)
      switch Int.random(in: 0..<4, using: &order) {
      case 0 where Self.items(current).count >= 2:
        var moved = Self.items(current)
        let element = moved.remove(at: Int.random(in: 0..<moved.count, using: &order))
        moved.insert(element, at: Int.random(in: 0...moved.count, using: &order))
        if moved != Self.items(current) { return .array(moved) }
      case 1:
        let kept = items.filter(Self.items(current).contains)
        return .array(items.filter { !kept.contains($0) } + kept)
      default: break
      }
      return .array(items)
    case .dictionary:
      var entries = Self.entries(current)
      let before = entries
      repeat {
        let name = Self.entryNames.randomElement(using: &random) ?? "a"
        entries[name] = Int.random(in: 0..<3, using: &random) == 0 ? nil : .string("v:\(id):\(name)")
      } while entries == before || Bool.random(using: &random)
      return .dictionary(entries)
    case .max, .min:
      // Unique to the write: the step index in the low digits.
      return .integer(Int64(random.next() % 997) * 1_000 + Int64(index))
    case .custom:
      return .string("w:\(id):" + String(repeating: "x", count: Int(random.next() % 8)))
    }
  }

  static func items(_ value: PropertyListValue?) -> [PropertyListValue] {
    if case .array(let items)? = value { return items }
    return []
  }

  static func entries(_ value: PropertyListValue?) -> [String: PropertyListValue] {
    if case .dictionary(let entries)? = value { return entries }
    return [:]
  }

  /// The write an element (`e:<write>:<n>`) or an entry value (`v:<write>:<entry>`) came
  /// from.
  static func writeID(ofPart part: PropertyListValue) -> String? {
    guard case .string(let text) = part else { return nil }
    let fields = text.split(separator: ":", omittingEmptySubsequences: false)
    guard fields.count == 3, fields[0] == "e" || fields[0] == "v" else { return nil }
    return String(fields[1])
  }

  /// The ids of the writes whose parts `value` holds (for a collection), or of the one
  /// write whose value it is; `nil` when some part names no write (an invented value).
  func writeIDs(in value: PropertyListValue, numbers: [PropertyListValue: String]) -> [String]? {
    switch self {
    case .set, .union:
      let ids = Self.items(value).map(Self.writeID(ofPart:))
      return ids.contains(nil) || !(value.isArray) ? nil : ids.compactMap { $0 }
    case .dictionary:
      guard case .dictionary(let entries) = value else { return nil }
      var ids: [String] = []
      for (name, part) in entries {
        guard let id = Self.writeID(ofPart: part), case .string(let text) = part, text.hasSuffix(":\(name)")
        else { return nil }
        ids.append(id)
      }
      return ids
    case .max, .min:
      return numbers[value].map { [$0] }
    case .custom:
      return WriteTag.id(in: value).map { [$0] }
    }
  }
}

extension PropertyListValue {
  fileprivate var isArray: Bool {
    if case .array = self { true } else { false }
  }
}

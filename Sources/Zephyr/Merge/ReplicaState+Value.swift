import Foundation

extension ReplicaState {
  /// The value the state holds, the same on every device that holds the state:
  /// - `.set`, `.union`: the elements, each once, in the state's ``ElementOrder``, then
  ///   those it does not list oldest write first;
  /// - `.dictionary`: per entry, the value of its latest write;
  /// - `.max`, `.min`, `.custom`: the siblings folded by the strategy in the order of
  ///   their writes (`nil`, a delete, when none is left).
  ///
  /// A collection with no element or entry left is empty while a write of an empty
  /// collection stands (a presence mark), and `nil` (deleted) otherwise. A `.custom` rule runs with no lock held;
  /// `resolving: false` skips it (then the latest sibling stands in), for callers under a
  /// lock that need a value only to compare it.
  func value(strategy: MergeStrategy, key: String, resolving: Bool = true) -> PropertyListValue? {
    switch kind {
    case .set, .union:
      guard !groups.isEmpty else { return nil }
      // (Only presence marks left: an empty array.)
      return .array(order.map { $0.arranging(heldElements) } ?? heldElements)
    case .packedSet:
      return groups.isEmpty ? nil : .data(keptPackedIds ?? PackedIntegers.encode(heldIds.sorted()))
    case .dictionary:
      return groups.isEmpty ? nil : .dictionary(entries)
    case .max, .min, .custom:
      let siblings = parts.map(\.part)
      guard var result = siblings.first else { return nil }
      let rule: MergeStrategy =
        switch (kind, strategy) {
        case (.max, _): .max
        case (.min, _): .min
        case (.custom, .custom) where resolving: strategy
        default: .lastWriterWins
        }
      if case .custom = rule, siblings.count > 1 { LockAudit.assertNoLockHeld(calling: "a custom merge strategy") }
      for sibling in siblings.dropFirst() {
        switch rule.resolve(Conflict(key: key, local: result, remote: sibling)) {
        case .keepLocal: break
        case .merged(let merged): result = merged
        case .keepRemote, .usePolicy: result = sibling
        }
      }
      return result
    }
  }

  /// A `.set`'s or `.union`'s elements, each once (by fingerprint), oldest write first.
  private var heldElements: [PropertyListValue] {
    var seen = Set<Fingerprint>()
    return parts.map(\.part).filter { seen.insert($0.fingerprint).inserted }
  }

  /// A packed set's ids, every group's.
  private var heldIds: Set<UInt64> {
    var ids = Set<UInt64>()
    for parts in groups.values { for case .unsignedInteger(let id) in parts { ids.insert(id) } }
    return ids
  }

  /// A dictionary state's entries: each key's latest write.
  private var entries: [String: PropertyListValue] {
    var entries: [String: PropertyListValue] = [:]
    for (_, part) in parts {
      if let (key, value) = Self.entry(part) { entries[key] = value }
    }
    return entries
  }

  /// A `.dictionary` part's key and value.
  static func entry(_ part: PropertyListValue) -> (key: String, value: PropertyListValue)? {
    guard case .array(let pair) = part, pair.count == 2, case .string(let key) = pair[0] else { return nil }
    return (key, pair[1])
  }

  /// The state after this device changed the key's value to `value` (`nil`: deleted),
  /// as a write at `dot`: the parts the new value no longer shows are removed (this
  /// device saw them), what it shows that the state lacks is added under `dot`, and the
  /// context takes `dot`. On the empty state, every part of `value` is new: a device with
  /// no history adds, and removes nothing. A `.set`'s or `.union`'s array that would not
  /// read in its order sets the state's ``ElementOrder`` to it, at `dot`.
  func edited(to value: PropertyListValue?, dot: Stamp) -> ReplicaState {
    var groups = self.groups
    var order = self.order
    var added: [PropertyListValue] = []
    switch kind {
    case .set, .union:
      let items = value?.arrayItems ?? []
      let shown = Set(items.map(\.fingerprint))
      for (groupDot, parts) in groups {
        groups[groupDot] = Self.kept(parts, value: value) { shown.contains($0.fingerprint) }
      }
      var held = Set(groups.values.joined().map(\.fingerprint))
      added = items.filter { held.insert($0.fingerprint).inserted }
    case .packedSet:
      let shown = Set(value?.packedIds ?? [])
      for (groupDot, parts) in groups {
        groups[groupDot] = Self.kept(parts, value: value) { part in
          if case .unsignedInteger(let id) = part { shown.contains(id) } else { false }
        }
      }
      added = shown.subtracting(heldIds).sorted().map { .unsignedInteger($0) }
    case .dictionary:
      let target = value?.dictionaryEntries ?? [:]
      let current = entries
      let changed = Set(target.keys).union(current.keys).filter { key in
        target[key]?.fingerprint != current[key]?.fingerprint
      }
      for (groupDot, parts) in groups {
        groups[groupDot] = Self.kept(parts, value: value) { part in
          Self.entry(part).map { !changed.contains($0.key) } ?? false
        }
      }
      added = changed.sorted().compactMap { key in target[key].map { .array([.string(key), $0]) } }
    case .max, .min, .custom:
      groups = [:]
      added = value.map { [$0] } ?? []
    }
    var context = self.context
    context.include(dot)
    if !added.isEmpty {
      groups[dot] = added
    } else if value != nil, !kind.holdsSiblings, groups.isEmpty {
      // An empty collection written: a presence mark, so it reads as empty, not deleted.
      groups[dot] = []
    }
    var edited = ReplicaState(kind: kind, groups: groups, context: context, order: order)
    if kind.holdsElements, let items = value?.arrayItems {
      // The written order, each element once, as the state holds it.
      var seen = Set<Fingerprint>()
      let written = items.map(\.fingerprint).filter { seen.insert($0).inserted }
      let shown = edited.value(strategy: .set, key: "")?.arrayItems ?? []
      if shown.map(\.fingerprint) != written {
        let held = Dictionary(shown.map { ($0.fingerprint, $0) }, uniquingKeysWith: { first, _ in first })
        order = ElementOrder(dot: dot, elements: written.compactMap { held[$0] })
        edited = ReplicaState(kind: kind, groups: groups, context: context, order: order)
      }
    }
    return edited
  }

  /// The parts of a group an edit keeps: those `keeps` accepts; a group left with none is
  /// gone (`nil`), and so is a presence mark under a delete.
  private static func kept(
    _ parts: [PropertyListValue], value: PropertyListValue?, _ keeps: (PropertyListValue) -> Bool
  ) -> [PropertyListValue]? {
    guard !parts.isEmpty else { return value == nil ? nil : parts }
    let kept = parts.filter(keeps)
    return kept.isEmpty ? nil : kept
  }

  /// Whether `local` (a value read from `UserDefaults`, or its absence) is the value
  /// `merged` (this state's): arrays compared by their elements (each once, by
  /// fingerprint) in order, or as sets when `inOrder` is false; entries and values by
  /// fingerprint; an empty collection is not a missing one (a delete).
  func shows(_ local: PropertyListValue?, merged: PropertyListValue?, inOrder: Bool = true) -> Bool {
    guard (local == nil) == (merged == nil) else { return false }
    switch kind {
    case .set, .union:
      guard kind.canMerge(local) else { return false }
      let (mine, theirs) = ((local?.arrayItems ?? []).map(\.fingerprint), (merged?.arrayItems ?? []).map(\.fingerprint))
      guard inOrder else { return Set(mine) == Set(theirs) }
      var seen = Set<Fingerprint>()
      return mine.filter { seen.insert($0).inserted } == theirs
    case .packedSet:
      // One set has one packed blob: equal blobs need no decoding.
      if case .data(let mine)? = local, case .data(let theirs)? = merged {
        if mine == theirs { return true }
        // Blobs of different counts hold different sets (or one does not decode).
        if let count = PackedIntegers.count(of: mine), count != PackedIntegers.count(of: theirs) { return false }
      }
      // Decoded ids are strictly increasing: equal sets are equal arrays.
      var mine: [UInt64] = []
      if let local {
        guard let ids = local.packedIds else { return false }  // not a packed set: no merge
        mine = ids
      }
      return mine == (merged?.packedIds ?? [])
    case .dictionary:
      let (mine, theirs) = (local?.dictionaryEntries ?? [:], merged?.dictionaryEntries ?? [:])
      return kind.canMerge(local) && mine.count == theirs.count
        && mine.allSatisfy { theirs[$0.key]?.fingerprint == $0.value.fingerprint }
    case .max, .min, .custom:
      return local?.fingerprint == merged?.fingerprint
    }
  }
}

extension ReplicaState {
  /// Whether `value` (this state's) shows every part the state holds: no concurrent
  /// sibling, of the key or of an entry, hides behind it. (Elements always show.)
  func showsAllItHolds(_ value: PropertyListValue?) -> Bool {
    switch kind {
    case .set, .union, .packedSet: return true
    case .dictionary:
      let shown = value?.dictionaryEntries ?? [:]
      return parts.allSatisfy { Self.entry($0.part).map { shown[$0.key] == $0.value } ?? false }
    case .max, .min, .custom: return parts.allSatisfy { $0.part == value }
    }
  }

  /// The state of a value written to the store by something other than Zephyr (an
  /// older app version, app code), read alike by every device: one write under a
  /// pseudo-origin named after the value (`~` and its fingerprint), at generation 1. It
  /// has seen nothing else, so it only adds.
  init(foreign value: PropertyListValue, kind: ReplicaKind) {
    let dot = Stamp(generation: 1, origin: "~" + String(value.fingerprint.rawValue, radix: 16))
    self = ReplicaState(kind: kind).edited(to: value, dot: dot)
  }
}

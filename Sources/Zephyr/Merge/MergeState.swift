import Foundation

/// One side of a strategy merge: a value (`nil`: deleted), every write it includes, what
/// it is made of (``MergeData``), and its stamp, which orders the elements of a merged
/// array. Pure values; merging them calls nothing but a `.custom` strategy's rule.
struct MergeState: Sendable, Equatable {
  var value: PropertyListValue?
  var versions: VersionVector
  var data: MergeData
  var stamp: Stamp

  /// A store record's state (a foreign value's: its own write, under the empty origin).
  init(record: SyncRecord, strategy: MergeStrategy) {
    self.init(
      value: record.content.value, versions: record.versions,
      data: record.mergeData ?? .implied(by: record.stamp, value: record.content.value, strategy: strategy),
      stamp: record.stamp)
  }

  /// A state. Parts of `value` that `data` does not describe are `stamp`'s write's (as is
  /// an entry whose latest sibling is not its value); data of parts `value` lacks is
  /// dropped.
  init(value: PropertyListValue?, versions: VersionVector, data: MergeData, stamp: Stamp) {
    self.value = value
    self.versions = versions
    self.stamp = stamp
    switch data {
    case .siblings:
      self.data = data
    case .elements(let known):
      var elements: [Fingerprint: [Stamp]] = [:]
      for item in value?.arrayItems ?? [] { elements[item.fingerprint] = known[item.fingerprint] ?? [stamp] }
      self.data = .elements(elements)
    case .entries(let known):
      var entries: [String: [MergeData.Sibling]] = [:]
      for (key, entry) in value?.dictionaryEntries ?? [:] {
        let siblings = known[key] ?? []
        let shown = siblings.max { $0.stamp < $1.stamp }?.value == entry
        entries[key] = shown ? siblings : [MergeData.Sibling(stamp: stamp, value: entry)]
      }
      self.data = .entries(entries)
    }
  }

  /// A local edit to `value` written at `stamp`, made from an agreed state that included
  /// `versions` and was made of `kept`. Elements and entries it kept keep their writes;
  /// those the store's state (`store`) holds too keep that state's (the value may be
  /// another process's write to a shared suite, not an edit made here); others are this
  /// write's. It replaces every sibling of the value, unless it is the store's value.
  static func edit(
    _ value: PropertyListValue?, at stamp: Stamp, versions: VersionVector, kept: MergeData?,
    store: MergeState? = nil, strategy: MergeStrategy
  ) -> MergeState {
    var versions = versions
    versions.include(stamp)
    let data: MergeData
    switch (strategy.mergeFamily, kept, store?.data) {
    case (.elements, let kept, let stored):
      // The store's parts only when the value is the store's state whole (another
      // process's write to a shared suite): an element also added here is this write's.
      let theirs = store.map { Self.sameValue($0.value, value) } == true ? stored : nil
      var elements: [Fingerprint: [Stamp]] = [:]
      for item in value?.arrayItems ?? [] {
        let key = item.fingerprint
        elements[key] = kept?.elementStamps[key] ?? theirs?.elementStamps[key] ?? [stamp]
      }
      data = .elements(elements)
    case (.entries, let kept, let stored):
      let theirs = store?.value == value ? stored : nil
      var entries: [String: [MergeData.Sibling]] = [:]
      for (key, entry) in value?.dictionaryEntries ?? [:] {
        let candidates = [kept?.entrySiblings[key], theirs?.entrySiblings[key]].compactMap { $0 }
        entries[key] =
          candidates.first { $0.last?.value == entry } ?? [MergeData.Sibling(stamp: stamp, value: entry)]
      }
      data = .entries(entries)
    case (.siblings, _, .siblings(let theirs)?) where store?.value == value:
      data = .siblings(theirs)
    default:
      data = .implied(by: stamp, value: value, strategy: strategy)
    }
    if let store, store.value == value { versions = versions.joined(with: store.versions) }
    return MergeState(value: value, versions: versions, data: data, stamp: stamp)
  }

  /// Whether its value shows all it is made of: no sibling of the value, or of an entry,
  /// holds another value the resolution hides.
  var showsAllItHolds: Bool {
    switch data {
    case .siblings(let siblings): siblings.allSatisfy { $0.value == value }
    case .elements: true
    case .entries(let entries):
      entries.allSatisfy { key, siblings in siblings.allSatisfy { $0.value == value?.dictionaryEntries?[key] } }
    }
  }

  /// Whether two states hold the same value and data (arrays compared as sets: a merge's
  /// order of elements is not news).
  func holdsTheSame(as other: MergeState) -> Bool {
    data == other.data && Self.sameValue(value, other.value)
  }

  /// Whether two values are the same, arrays compared as sets of elements.
  private static func sameValue(_ lhs: PropertyListValue?, _ rhs: PropertyListValue?) -> Bool {
    if let mine = lhs?.arrayItems, let theirs = rhs?.arrayItems { return Set(mine) == Set(theirs) }
    return lhs == rhs
  }

  /// The parts of `mine` this state keeps against `theirs`: each, unless `other` includes
  /// its write and does not hold it (it saw it, and replaced or removed it).
  fileprivate static func kept<Part: Equatable>(
    _ mine: [Part], against theirs: [Part], of other: MergeState, stamp: (Part) -> Stamp
  ) -> [Part] {
    mine.filter { !other.versions.includes(stamp($0)) || theirs.contains($0) }
  }
}

extension MergeStrategy {
  /// The exact merge of two states: every part of each side is kept unless the other
  /// side saw it and replaced or removed it. Deterministic: both devices get the same
  /// state. With `resolving` off, siblings are merged without resolving their value (no
  /// `.custom` rule runs; the value returned is then meaningless), for callers that need
  /// only the data, under a lock.
  func merge(
    key: String, _ mine: MergeState, _ theirs: MergeState, resolving: Bool = true
  ) -> (value: PropertyListValue?, data: MergeData) {
    // A value of another kind than the strategy merges (a string under `.set`, written
    // by an older build or by app code) has no parts.
    let mergeable = Self.isMergeable(mine.value, as: mergeFamily) && Self.isMergeable(theirs.value, as: mergeFamily)
    switch (mine.data, theirs.data) {
    case _ where !mergeable:
      break
    case (.siblings(let left), .siblings(let right)):
      let siblings = Self.union(left, right, mine, theirs)
      return (resolving ? resolve(key: key, siblings) : nil, .siblings(siblings))
    case (.elements(let left), .elements(let right)):
      return mergeElements(mine, left, theirs, right)
    case (.entries(let left), .entries(let right)):
      var entries: [String: PropertyListValue] = [:]
      var data: [String: [MergeData.Sibling]] = [:]
      for entry in Set(left.keys).union(right.keys) {
        let siblings = Self.union(left[entry] ?? [], right[entry] ?? [], mine, theirs)
        guard let latest = siblings.last?.value else { continue }
        (entries[entry], data[entry]) = (latest, siblings)
      }
      if entries.isEmpty, mine.value == nil || theirs.value == nil { return (nil, .entries([:])) }
      return (.dictionary(entries), .entries(data))
    default:
      break
    }
    // Values the strategy cannot merge by parts, or data of different kinds (the strategy
    // changed): the later state, as it is, rather than an empty collection.
    return mine.stamp > theirs.stamp ? (mine.value, mine.data) : (theirs.value, theirs.data)
  }

  /// Whether a value (or a delete, merged as an empty collection) is of the kind a family
  /// merges by parts.
  static func isMergeable(_ value: PropertyListValue?, as family: MergeFamily) -> Bool {
    switch family {
    case .siblings: true
    case .elements: value == nil || value?.arrayItems != nil
    case .entries: value == nil || value?.dictionaryEntries != nil
    }
  }

  /// The siblings both sides keep, oldest first, each once.
  private static func union(
    _ left: [MergeData.Sibling], _ right: [MergeData.Sibling], _ mine: MergeState, _ theirs: MergeState
  ) -> [MergeData.Sibling] {
    let kept =
      MergeState.kept(left, against: right, of: theirs, stamp: \.stamp)
      + MergeState.kept(right, against: left, of: mine, stamp: \.stamp)
    var unique: [MergeData.Sibling] = []
    for sibling in kept.sorted(by: { $0.stamp < $1.stamp }) where unique.last?.stamp != sibling.stamp {
      unique.append(sibling)
    }
    return unique
  }

  /// The value of concurrent siblings: the strategy folds them in the order of their
  /// stamps (a `.custom` rule sees the earlier as `local`); where it does not apply (a
  /// delete, another kind), the later write's. For `.max` and `.min` a delete gives way
  /// to any value written alongside it (it removes what its device had seen, as a `.set`
  /// removal does), so the result is the extreme of the values whatever the order.
  func resolve(key: String, _ siblings: [MergeData.Sibling]) -> PropertyListValue? {
    var siblings = siblings
    if keepsAnExtreme, siblings.contains(where: { $0.value != nil }) { siblings.removeAll { $0.value == nil } }
    guard var result = siblings.first else { return nil }
    if case .custom = self, siblings.count > 1 { LockAudit.assertNoLockHeld(calling: "a custom merge strategy") }
    for sibling in siblings.dropFirst() {
      switch resolve(Conflict(key: key, local: result.value, remote: sibling.value)) {
      case .keepLocal: break
      case .merged(let value): result = MergeData.Sibling(stamp: sibling.stamp, value: value)
      case .keepRemote, .usePolicy: result = sibling
      }
    }
    return result.value
  }

  /// Elements: kept with the writes that added them and that neither side removed.
  /// `.union` keeps every element either side holds. The later state's order first.
  private func mergeElements(
    _ mine: MergeState, _ left: [Fingerprint: [Stamp]], _ theirs: MergeState, _ right: [Fingerprint: [Stamp]]
  ) -> (value: PropertyListValue?, data: MergeData) {
    var keepsEverything = false
    if case .union = self { keepsEverything = true }
    var elements: [Fingerprint: [Stamp]] = [:]
    var items: [PropertyListValue] = []
    let (first, second) = mine.stamp > theirs.stamp ? (mine, theirs) : (theirs, mine)
    for item in (first.value?.arrayItems ?? []) + (second.value?.arrayItems ?? []) {
      let key = item.fingerprint
      guard elements[key] == nil else { continue }
      let (ours, other) = (left[key] ?? [], right[key] ?? [])
      var stamps = Set(
        MergeState.kept(ours, against: other, of: theirs, stamp: { $0 })
          + MergeState.kept(other, against: ours, of: mine, stamp: { $0 }))
      if keepsEverything { stamps.formUnion(ours + other) }
      guard !stamps.isEmpty else { continue }
      elements[key] = stamps.sorted()
      items.append(item)
    }
    if items.isEmpty, mine.value == nil || theirs.value == nil { return (nil, .elements([:])) }
    return (.array(items), .elements(elements))
  }
}

extension VersionVector {
  /// Whether the write at `stamp` is among these.
  func includes(_ stamp: Stamp) -> Bool {
    self[stamp.origin] >= stamp.generation
  }
}

import Foundation

extension ReplicaState {
  /// The state a record of the first format (`z1`) describes, upgraded: a
  /// last-writer-wins record's value as its own write's parts; a strategy record's
  /// history (its ``VersionVector``) as the context, and what it said each part was made
  /// of (its ``MergeData``) as the groups. Data of another kind than `kind` (the strategy
  /// changed) counts as the record's own write.
  init(legacy record: SyncRecord, kind: ReplicaKind) {
    self.init(
      kind: kind, value: record.content.value, data: record.mergeData, versions: record.versions, own: record.stamp)
  }

  /// A first-format ledger memory, upgraded, given the local value the device holds:
  /// the parts that value still shows keep their writes; elements the memory cannot
  /// place (added by an edit not yet pushed) are left out, for the edit to add. `nil`
  /// when the memory is of another kind (the strategy changed): the key then has no
  /// history, which removes nothing.
  init?(legacyMemory memory: MergeMemory, local: PropertyListValue?, kind: ReplicaKind) {
    let family: MergeFamily = kind.holdsElements ? .elements : kind == .dictionary ? .entries : .siblings
    guard memory.data.family == family else { return nil }
    self.init(kind: kind, value: local, data: memory.data, versions: memory.versions, own: nil)
  }

  private init(
    kind: ReplicaKind, value: PropertyListValue?, data: MergeData?, versions: VersionVector, own: Stamp?
  ) {
    var groups: [Stamp: [PropertyListValue]] = [:]
    switch (kind, data) {
    case (.set, .elements(let stamps)?), (.union, .elements(let stamps)?):
      for item in value?.arrayItems ?? [] {
        let dots = stamps[item.fingerprint] ?? own.map { [$0] } ?? []
        for dot in dots { groups[dot, default: []].append(item) }
      }
    case (.dictionary, .entries(let entries)?):
      for (key, siblings) in entries {
        for sibling in siblings {
          if let entry = sibling.value { groups[sibling.stamp, default: []].append(.array([.string(key), entry])) }
        }
      }
    case (.max, .siblings(let siblings)?), (.min, .siblings(let siblings)?), (.custom, .siblings(let siblings)?):
      for sibling in siblings { if let entry = sibling.value { groups[sibling.stamp] = [entry] } }
    default:
      // No data, or data of another kind: the record's own write made the value.
      let own = own ?? Stamp(generation: versions.maximum, origin: "")
      self = ReplicaState(kind: kind, groups: [:], context: versions).edited(to: value, dot: own)
      return
    }
    // (The parts of one first-format write come in the order of a value some device
    // holds, which may differ between devices: a `.union` write's are put in one order.)
    let canonical = groups.mapValues { parts in
      kind == .union ? parts.sorted { $0.fingerprint.rawValue < $1.fingerprint.rawValue } : parts
    }
    self.init(kind: kind, groups: canonical.filter { versions.includes($0.key) }, context: versions)
  }
}

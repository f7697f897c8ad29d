import Foundation

/// Which writes of one key a state includes: per writing device, the generation of its
/// latest write that the state was made from (directly, or through a merge). Kept only
/// for keys merged by a ``MergeStrategy`` other than last-writer-wins.
///
/// It answers the one question a merge needs and a single stamp cannot: was the store's
/// record made *after* this device's agreed state (it includes that state's write: take
/// it), *before* it (the store lost a later write: publish it again), or *alongside* it
/// (neither includes the other: merge the two)? A device that merely missed an
/// intermediate write then takes the latest one instead of merging with it, and a write
/// made without this device's latest state is merged, never taken over it.
///
/// Each device numbers its writes with its Lamport clock, so a device's writes of a key
/// grow in generation, and "includes the write at generation g" means every earlier one
/// of that device too.
struct VersionVector: Sendable, Hashable, CustomStringConvertible {
  /// Device id → generation of its latest included write. A foreign value (written by
  /// no Zephyr device) counts under the empty id.
  private(set) var entries: [String: UInt64] = [:]

  /// How two states' histories relate.
  enum Order: Sendable, Equatable {
    /// The same writes.
    case same
    /// The other includes every write of this one, and more.
    case after
    /// This one includes every write of the other, and more.
    case before
    /// Each has a write the other lacks.
    case concurrent
  }

  init(_ entries: [String: UInt64] = [:]) {
    self.entries = entries.filter { $0.value > 0 }
  }

  /// The vector of a single write.
  init(dot stamp: Stamp) {
    self.init([stamp.origin: stamp.generation])
  }

  subscript(origin: String) -> UInt64 {
    entries[origin] ?? 0
  }

  var isEmpty: Bool { entries.isEmpty }

  /// The highest generation of any write included; 0 for none.
  var maximum: UInt64 { entries.values.max() ?? 0 }

  /// Adds a write (keeps the higher generation of its device).
  mutating func include(_ stamp: Stamp) {
    guard stamp.generation > self[stamp.origin] else { return }
    entries[stamp.origin] = stamp.generation
  }

  /// Every write of both.
  func joined(with other: VersionVector) -> VersionVector {
    var joined = self
    for (origin, generation) in other.entries { joined.include(Stamp(generation: generation, origin: origin)) }
    return joined
  }

  /// Whether the write at `stamp` is among these.
  func includes(_ stamp: Stamp) -> Bool {
    self[stamp.origin] >= stamp.generation
  }

  /// Whether every write of `self` is in `other`.
  func isIncluded(in other: VersionVector) -> Bool {
    entries.allSatisfy { origin, generation in generation <= other[origin] }
  }

  /// How `other` relates to `self`: ``Order/after`` when `other` includes `self` and more.
  func order(of other: VersionVector) -> Order {
    switch (isIncluded(in: other), other.isIncluded(in: self)) {
    case (true, true): .same
    case (true, false): .after
    case (false, true): .before
    case (false, false): .concurrent
    }
  }

  /// The entries, sorted by device id.
  var sortedEntries: [(origin: String, generation: UInt64)] {
    entries.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
  }

  /// The entries other than `origin`'s, sorted by device id: what a record stores beside
  /// its own stamp.
  func entries(excluding origin: String) -> [(origin: String, generation: UInt64)] {
    sortedEntries.filter { $0.origin != origin }
  }

  var description: String {
    "{" + entries.keys.sorted().map { "\($0.isEmpty ? "foreign" : $0):\(entries[$0] ?? 0)" }.joined(separator: " ")
      + "}"
  }
}

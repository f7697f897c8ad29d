import Foundation

/// A record write the plan makes: its stamp and value, the merged value to write
/// locally too, the base it names (keys merged by a strategy), and what the ledger
/// remembers for a three-way merge.
struct PlannedRecord {
  var stamp: Stamp
  var value: PropertyListValue?
  var merged: PropertyListValue?
  var base: Stamp?
  var memory: MergeMemory?
}

extension EngineState {
  /// The strategy that merges `key`.
  func strategy(of key: String) -> MergeStrategy {
    configuration.mergeStrategies[key] ?? .lastWriterWins
  }

  /// `memory` when `key` is merged three-way; otherwise nothing is remembered.
  func remembering(_ key: String, _ memory: MergeMemory) -> MergeMemory? {
    strategy(of: key).isThreeWay ? memory : nil
  }

  /// The base a pushed record of `key` names: the store's state a strategy merged it
  /// with, else the agreed state it was made from. Last-writer-wins keys name none.
  func recordBase(_ key: String, merging base: Stamp?) -> Stamp? {
    guard !strategy(of: key).isLastWriterWins else { return nil }
    return base ?? ledger[key]?.stamp
  }

  /// What a three-way key remembers once `value` is pushed: after a merge with the
  /// store's state, that state is the base; after a local edit, the base stays the one
  /// the agreed state was made from.
  func pushMemory(
    _ key: String, value: PropertyListValue?, merging base: Stamp?, remote: PropertyListValue?
  ) -> MergeMemory? {
    guard strategy(of: key).isThreeWay else { return nil }
    if let base {
      var baseValue: PropertyListValue?
      if case .record(let record) = RemoteState(storeValue: remote) { baseValue = record.content.value }
      if case .foreign(let foreign) = RemoteState(storeValue: remote) { baseValue = foreign }
      return MergeMemory(agreed: value, base: base, baseValue: baseValue)
    }
    guard let previous = ledger[key] else { return MergeMemory(agreed: value) }
    var memory = previous.memory ?? MergeMemory(agreed: nil, base: previous.stamp)
    if previous.stamp != memory.base {
      memory.ownStates.append(MergeMemory.OwnState(stamp: previous.stamp, value: memory.agreed))
      memory.ownStates = Array(memory.ownStates.suffix(MergeMemory.maximumOwnStates))
    }
    memory.agreed = value
    return memory
  }
}

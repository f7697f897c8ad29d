import Foundation

/// How each key merges: the app's ``SyncConfiguration/mergeStrategies`` and
/// ``SyncConfiguration/setCapacities`` first, then what a typed key declared at its first
/// use (kept here, never written into the app's configuration), else last-writer-wins.
extension EngineState {
  /// The strategy a device declares for `key`.
  func strategy(of key: String) -> MergeStrategy {
    configuration.mergeStrategies[key] ?? typedStrategies[key] ?? .lastWriterWins
  }

  /// The most elements `key` keeps when merged by `.set`; `nil` for no limit.
  func capacity(of key: String) -> Int? {
    configuration.setCapacities[key] ?? typedCapacities[key]
  }

  /// Whether deciding may call a `.custom` strategy, which is user code.
  var hasCustomStrategy: Bool {
    let isCustom = { (strategy: MergeStrategy) in if case .custom = strategy { true } else { false } }
    return configuration.mergeStrategies.values.contains(where: isCustom)
      || typedStrategies.values.contains(where: isCustom)
  }

  /// Records the strategy (and capacity) a typed key declares, at its first use. A
  /// last-writer-wins key records nothing: that is what an unlisted key does.
  mutating func declare(_ strategy: MergeStrategy, capacity: Int?, for key: String) {
    if case .lastWriterWins = strategy { return }
    typedStrategies[key] = strategy
    if let capacity { typedCapacities[key] = capacity }
  }
}

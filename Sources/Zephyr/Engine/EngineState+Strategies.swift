import Foundation

/// What a ``SyncKey`` declares, kept by the coordinator from the key's first use (see
/// ``EngineState/typedKeys``): its strategy, its `.set` capacity, and whether its record
/// is stored compressed.
struct KeyDeclaration: Sendable {
  var strategy: MergeStrategy
  var capacity: Int?
  var isCompressed: Bool
}

/// How each key merges: the app's ``SyncConfiguration/mergeStrategies`` and
/// ``SyncConfiguration/setCapacities`` first, then what a typed key declared at its first
/// use (never written into the app's configuration), else last-writer-wins.
extension EngineState {
  /// The strategy a device declares for `key`.
  func strategy(of key: String) -> MergeStrategy {
    configuration.mergeStrategies[key] ?? typedKeys[key]?.strategy ?? .lastWriterWins
  }

  /// The most elements `key` keeps when merged by `.set`; `nil` for no limit.
  func capacity(of key: String) -> Int? {
    configuration.setCapacities[key] ?? typedKeys[key]?.capacity
  }

  /// Whether deciding may call a `.custom` strategy, which is user code.
  var hasCustomStrategy: Bool {
    let isCustom = { (strategy: MergeStrategy) in if case .custom = strategy { true } else { false } }
    return configuration.mergeStrategies.values.contains(where: isCustom)
      || typedKeys.values.contains { isCustom($0.strategy) }
  }
}

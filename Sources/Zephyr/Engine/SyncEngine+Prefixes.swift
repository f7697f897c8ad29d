import Foundation

extension SyncEngine {
  /// See ``SyncCoordinator/addKeysToBeMonitored(prefix:)``.
  func addKeysToBeMonitored(prefix: String) {
    state.withLock { state in
      _ = state.monitoredPrefixes.insert(prefix)
    }
  }

  /// See ``SyncCoordinator/removeKeysFromBeingMonitored(prefix:)``.
  func removeKeysFromBeingMonitored(prefix: String) {
    state.withLock { state in
      _ = state.monitoredPrefixes.remove(prefix)
    }
  }

  /// See ``SyncCoordinator/monitoredPrefixes``.
  var monitoredPrefixes: Set<String> { state.withLock { $0.monitoredPrefixes } }
}

extension SyncEngine {
  /// Keys under monitored prefixes that `change` may concern, before they are admitted:
  /// the keys it names, or, for an event that names none (or after which every key is
  /// news: the initial download, an account change), every such key the store, the suite
  /// and the ledger hold. Empty when no prefix is monitored. Reads with no lock held.
  func candidatesUnderMonitoredPrefixes(for change: ExternalChange) -> [String] {
    guard change.reason != .quotaViolation else { return [] }
    let (prefixes, ledgerKeys) = state.withLock { state in
      (state.monitoredPrefixes, state.monitoredPrefixes.isEmpty ? [] : state.ledgerKeysUnderMonitoredPrefixes())
    }
    guard !prefixes.isEmpty else { return [] }
    if change.reason == .serverChange, let named = change.keys { return named }
    var keys = Set(ledgerKeys)
    keys.formUnion(callingOut { store.allValues() }.keys)
    keys.formUnion(callingOut { domain.persistentValues() }.values.keys)
    return keys.filter { key in prefixes.contains(where: key.hasPrefix) }
  }

  /// The keys among `candidates` that are under a monitored prefix and may be synced;
  /// an overlong one is refused by name in ``status``.
  func admitUnderMonitoredPrefixes(_ candidates: some Sequence<String>) -> Set<String> {
    state.withLock { state in
      Set(state.admit(candidates.filter(state.isUnderMonitoredPrefix).sorted()))
    }
  }
}

extension EngineState {
  /// Whether `key` starts with a monitored prefix and is a key Zephyr may sync at all
  /// (not a system or bookkeeping key).
  func isUnderMonitoredPrefix(_ key: String) -> Bool {
    !monitoredPrefixes.isEmpty && monitoredPrefixes.contains(where: key.hasPrefix)
      && KeyPolicy.exclusion(of: key) == nil
  }

  /// The ledger's keys under monitored prefixes: keys agreed on before, which a local
  /// delete has removed from the suite.
  func ledgerKeysUnderMonitoredPrefixes() -> [String] {
    ledger.entries.keys.filter(isUnderMonitoredPrefix)
  }
}

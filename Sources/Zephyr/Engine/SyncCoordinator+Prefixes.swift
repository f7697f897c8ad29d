import Foundation

extension SyncCoordinator {
  /// Monitors every key that starts with `prefix`, now and as keys appear: per-item keys
  /// such as `account.v2.<id>` that other devices add, change and delete are applied as
  /// their store changes arrive, without a full ``sync()``, and local edits of them are
  /// pushed like those of any monitored key.
  ///
  /// ```swift
  /// coordinator.addKeysToBeMonitored(prefix: "account.v2.")
  /// // another device sets "account.v2.42": applied here when its change arrives
  /// ```
  ///
  /// The match is a plain string prefix: `"account.v2."` covers `account.v2.42`, not
  /// `account.v2` or `account.v3.1`. System and Zephyr bookkeeping keys are never covered,
  /// and a key under the prefix that Zephyr cannot sync (over 64 UTF-8 bytes) is refused
  /// by name in ``status`` when it shows up. Keys under a prefix count in the store's key
  /// budget like any other key, as they are pushed or pulled.
  ///
  /// Finding new keys costs a read of the suite's persistent domain: on each local-edit
  /// push while a prefix is monitored, and on an event that names no keys (the initial
  /// download, an account change). An event that names its keys costs nothing more.
  public func addKeysToBeMonitored(prefix: String) {
    state.withLock { state in
      _ = state.monitoredPrefixes.insert(prefix)
    }
  }

  /// Stops monitoring the keys under `prefix` (keys also monitored by name stay
  /// monitored). Their values stay where they are; ``sync()`` still covers them.
  ///
  /// ```swift
  /// coordinator.removeKeysFromBeingMonitored(prefix: "account.v2.")
  /// ```
  public func removeKeysFromBeingMonitored(prefix: String) {
    state.withLock { state in
      _ = state.monitoredPrefixes.remove(prefix)
    }
  }

  /// The prefixes monitored with ``addKeysToBeMonitored(prefix:)``.
  public var monitoredPrefixes: Set<String> { state.withLock { $0.monitoredPrefixes } }
}

extension SyncCoordinator {
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

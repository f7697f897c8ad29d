import Foundation

/// The local side: one `UserDefaults` suite, read through its persistent domain so that
/// registered defaults, launch arguments and the global domain are never mistaken for
/// the app's own values.
///
/// No lock is held around any call into `UserDefaults` (see <doc:Threading>): on Apple
/// platforms every write posts `didChangeNotification` synchronously, to observers that
/// may call back into Zephyr from this or another thread. `UserDefaults` is thread-safe (Apple:
/// "The UserDefaults class is thread-safe"; Apple's SDK marks it `Sendable`), which
/// swift-corelibs-foundation does not declare, hence `nonisolated(unsafe)`.
final class UserDefaultsDomain: Sendable {
  nonisolated(unsafe) private let defaults: UserDefaults
  /// The persistent domain's name: the suite name, or for `.standard` the bundle
  /// identifier (on Linux, where there is none, the process name). `nil` for a suite
  /// other than `.standard` given without its name: `UserDefaults` does not tell it, so
  /// its persistent domain cannot be read, and values are read key by key instead.
  let persistentName: String?

  init(defaults: UserDefaults, suiteName: String?) {
    self.defaults = defaults
    persistentName = suiteName ?? (defaults === UserDefaults.standard ? Self.standardDomainName : nil)
  }

  /// The name the ledger file and ``SyncCoordinator/domainName`` go by.
  var name: String { persistentName ?? Self.unnamedSuiteName }

  /// What an unnamed suite goes by (see ``persistentName``).
  static let unnamedSuiteName = "Zephyr.unnamed-suite"

  static var standardDomainName: String {
    Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
  }

  /// What one read of the local side found.
  struct Snapshot {
    /// Values by key.
    var values: [String: PropertyListValue] = [:]
    /// Keys whose value is not a property list.
    var unreadable: [String] = []
    /// The domain's ledger epoch (see ``Ledger``), read in the same pass.
    var epoch: String?
  }

  /// The persistent domain, read once: the values of `keys` (every key when `nil`),
  /// bridged, and the ledger epoch.
  /// For an unnamed suite, `keys` are read one by one, leaving out registered defaults
  /// and launch arguments (every key when `nil` is then none).
  func persistentValues(of keys: Set<String>? = nil) -> Snapshot {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    guard let persistentName else { return keyedValues(keys ?? []) }
    let domain = defaults.persistentDomain(forName: persistentName) ?? [:]
    var snapshot = Snapshot(epoch: Self.string(domain[EngineState.ledgerIDKey]))
    snapshot.values.reserveCapacity(keys?.count ?? domain.count)
    for (key, raw) in domain where keys?.contains(key) ?? true {
      if let value = PropertyListValue(bridging: raw) {
        snapshot.values[key] = value
      } else {
        snapshot.unreadable.append(key)
      }
    }
    return snapshot
  }

  /// The persistent-domain values of `keys` and the ledger epoch, at a cost that grows
  /// with `keys` rather than with the domain when the values are the expected ones.
  /// (On Linux the first read after any write still costs the whole domain: Foundation
  /// rebuilds its merged dictionary then.)
  ///
  /// Each key is read with `object(forKey:)`, which also answers from registered
  /// defaults, launch arguments and the global domain. A value is taken as it is when
  /// `isExpected` accepts it and no registration or argument names its key; any other
  /// value is confirmed against the persistent domain (read at most once per call).
  /// swift-corelibs-foundation does not expose registered defaults through
  /// `volatileDomain(forName:)`, which is why an unexpected value is always confirmed.
  func values(
    forKeys keys: some Sequence<String>, isExpected: (String, PropertyListValue) -> Bool
  ) -> Snapshot {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    guard let persistentName else { return keyedValues(keys) }
    let shadowing = Self.shadowingKeys(of: defaults)
    var persistent: [String: Any]?
    var snapshot = Snapshot(epoch: Self.string(defaults.object(forKey: EngineState.ledgerIDKey)))
    for key in keys {
      guard let raw = defaults.object(forKey: key), var value = PropertyListValue(bridging: raw) else { continue }
      if shadowing.contains(key) || !isExpected(key, value) {
        if persistent == nil { persistent = defaults.persistentDomain(forName: persistentName) ?? [:] }
        guard let confirmed = persistent?[key].flatMap(PropertyListValue.init(bridging:)) else { continue }
        value = confirmed
      }
      snapshot.values[key] = value
    }
    return snapshot
  }

  /// An unnamed suite's values of `keys`, read with `object(forKey:)`: a key that a
  /// launch argument names is left out, and so is a value equal to the registered
  /// default (which on Linux, where registered defaults are not visible, cannot be told).
  private func keyedValues(_ keys: some Sequence<String>) -> Snapshot {
    let registered = defaults.volatileDomain(forName: UserDefaults.registrationDomain)
    let arguments = defaults.volatileDomain(forName: UserDefaults.argumentDomain)
    var snapshot = Snapshot(epoch: Self.string(defaults.object(forKey: EngineState.ledgerIDKey)))
    for key in keys where arguments[key] == nil {
      guard let raw = defaults.object(forKey: key) else { continue }
      guard let value = PropertyListValue(bridging: raw) else {
        snapshot.unreadable.append(key)
        continue
      }
      if let registeredValue = registered[key].flatMap(PropertyListValue.init(bridging:)), registeredValue == value {
        continue
      }
      snapshot.values[key] = value
    }
    return snapshot
  }

  func set(_ value: PropertyListValue, forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    defaults.set(value.foundationValue, forKey: key)
  }

  /// Removes a key. Never `set(nil, forKey:)`: on Linux that call never returns.
  func remove(forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    defaults.removeObject(forKey: key)
  }

  /// What the suite says of protected data when it reports it (``ProtectedDataReporting``);
  /// `nil` for a suite that does not.
  func reportedProtectedDataAvailability() -> Bool? {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    return (defaults as? any ProtectedDataReporting)?.isProtectedDataAvailable
  }

  /// Whether `object` is this domain's `UserDefaults` instance: an identity comparison,
  /// no call into `UserDefaults` and no lock.
  func isBacked(by object: AnyObject?) -> Bool {
    defaults === object
  }

  /// The instance, as the `object` to observe its `didChangeNotification` with.
  var instance: AnyObject { defaults }

  /// What `object(forKey:)` answers for `key`, bridged: the persistent domain, else launch
  /// arguments or a registered default, as `string(forKey:)` and `@AppStorage` read it.
  /// One call, whatever the domain's size. For typed reads only: syncing reads the
  /// persistent domain, so that registered defaults are never uploaded.
  func visibleValue(forKey key: String) -> PropertyListValue? {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    return defaults.object(forKey: key).flatMap(PropertyListValue.init(bridging:))
  }

  /// Whether `object(forKey:)` finds anything for `key`, from any domain.
  func containsAnyValue(forKey key: String) -> Bool {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    return defaults.object(forKey: key) != nil
  }

  /// One of Zephyr's bookkeeping strings (never synced). Read with `object(forKey:)`,
  /// which is cheap; nobody registers defaults for Zephyr's own keys.
  func bookkeepingString(forKey key: String) -> String? {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    return Self.string(defaults.object(forKey: key))
  }

  /// `raw` when it is a string, as Foundation hands it back (boxed or not).
  private static func string(_ raw: Any?) -> String? {
    guard case .string(let text)? = raw.flatMap(PropertyListValue.init(bridging:)) else { return nil }
    return text
  }

  func setBookkeepingString(_ text: String, forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    defaults.set(text, forKey: key)
  }

  /// Keys that `object(forKey:)` may answer from somewhere other than the persistent domain.
  private static func shadowingKeys(of defaults: UserDefaults) -> Set<String> {
    var keys = Set<String>()
    for domain in [UserDefaults.registrationDomain, UserDefaults.argumentDomain] {
      keys.formUnion(defaults.volatileDomain(forName: domain).keys)
    }
    return keys
  }
}

import Foundation

/// Keeps chosen `UserDefaults` keys equal on all of a person's devices through a
/// ``KeyValueSyncStore``.
///
/// The ``Zephyr`` facade forwards to one shared coordinator; create your own for extra
/// suites or in tests:
///
/// ```swift
/// let cloud = SimulatedCloud()
/// let coordinator = SyncCoordinator(defaults: suite, suiteName: "group.example",
///                                   store: cloud.device("A"))
/// coordinator.addKeysToBeMonitored(keys: ["theme"])
/// coordinator.sync()
/// ```
///
/// Every method may be called from any thread; operations run one at a time. Releasing
/// the coordinator stops its observers: it applies no event after it is gone.
///
/// ## Topics
///
/// ### Creating a coordinator
/// - ``init(defaults:suiteName:store:configuration:)``
///
/// ### Syncing
/// - ``sync()``
/// - ``sync(keys:)-([String])``
/// - ``sync(keys:)-(String...)``
///
/// ### Monitoring keys
/// - ``addKeysToBeMonitored(keys:)-([String])``
/// - ``addKeysToBeMonitored(keys:)-(String...)``
/// - ``removeKeysFromBeingMonitored(keys:)-([String])``
/// - ``removeKeysFromBeingMonitored(keys:)-(String...)``
/// - ``monitoredKeys``
/// - ``waitForPendingLocalEdits()``
///
/// ### Configuration and identity
/// - ``configuration``
/// - ``deviceID``
/// - ``store``
/// - ``domainName``
///
/// ### Diagnostics
/// - ``status``
public final class SyncCoordinator: Sendable {
  /// The store this coordinator syncs with.
  public let store: any KeyValueSyncStore
  /// The name of the persistent domain that full ``sync()`` covers.
  public var domainName: String { domain.name }

  let domain: UserDefaultsDomain
  let ledgerFile: LedgerFile
  /// Everything an operation reads or changes. Held for the whole operation, so
  /// operations never interleave.
  let state: Locked<EngineState>
  /// What arrives while an operation holds `state` on the same thread (a store event
  /// posted during our own write, a `didChangeNotification` echo). Taken only briefly
  /// and never while waiting for `state`, so it cannot deadlock.
  let mailbox = Locked(Mailbox())
  private let observations = Locked<[ObservationToken]>([])
  private let localEditQueue = DispatchQueue(label: "Zephyr.local-edits")

  /// The coordinator whose operation the current thread is running, if any.
  @TaskLocal static var operating: ObjectIdentifier?

  /// Creates a coordinator and starts observing the store's external changes and the
  /// suite's `didChangeNotification`.
  ///
  /// - Parameters:
  ///   - defaults: The suite to sync; `.standard` by default.
  ///   - suiteName: The suite's name, which names its persistent domain. Pass it for any
  ///     suite other than `.standard`; `nil` means the app's own domain.
  ///   - store: The sync store, such as `UbiquitousStore.default` (Apple platforms) or a
  ///     `SimulatedCloud` device.
  ///   - configuration: Behaviour and limits; see ``SyncConfiguration``.
  public init(
    defaults: UserDefaults = .standard, suiteName: String? = nil, store: any KeyValueSyncStore,
    configuration: SyncConfiguration = SyncConfiguration()
  ) {
    let domain = UserDefaultsDomain(defaults: defaults, suiteName: suiteName)
    self.domain = domain
    self.store = store
    ledgerFile = LedgerFile(directory: configuration.ledgerDirectory, domainName: domain.name)
    state = Locked(EngineState.load(domain: domain, ledgerFile: ledgerFile, configuration: configuration))
    settlePendingPulls()
    startObserving()
  }

  deinit {
    for token in observations.withLock({ $0 }) { token.cancel() }
  }

  // MARK: Configuration and status

  /// The coordinator's configuration. Changing it takes effect with the next operation.
  public var configuration: SyncConfiguration {
    get { state.withLock { $0.configuration } }
    set {
      state.withLock {
        $0.configuration = newValue
        $0.status.limits = newValue.limits
      }
    }
  }

  /// This device's id, as written into the records it pushes.
  public var deviceID: String { state.withLock { $0.deviceID } }

  /// The keys whose inbound changes and local edits are applied automatically.
  public var monitoredKeys: Set<String> { state.withLock { $0.monitoredKeys } }

  /// What the coordinator did and why; see ``SyncStatus``.
  public var status: SyncStatus {
    let isSignedIn = store.isSignedIn
    return state.withLock { $0.statusSnapshot(isSignedIn: isSignedIn) }
  }

  // MARK: Syncing

  /// Reconciles every key of the app's persistent domain, and every key the store and
  /// the ledger know, in both directions; then removes tombstones older than
  /// ``SyncConfiguration/tombstoneLifetime`` from the store.
  ///
  /// Covers the persistent domain only: registered defaults, system keys (`Apple…`,
  /// `NS…`, `com.apple.…`, …) and Zephyr's bookkeeping are never uploaded. When both
  /// sides changed a key to different values, the local value wins (or the
  /// ``SyncConfiguration/conflictResolver`` decides). Returns after pulled values are
  /// written: a read on the next line sees them.
  public func sync() {
    perform { state in
      removeLegacyStamp(&state)
      let local = domain.persistentValues()
      state.verifyEpoch(local.epoch, of: domain)
      for key in local.unreadable where KeyPolicy.exclusion(of: key) == nil {
        state.refuse(key, .notPropertyList)
      }
      let remote = store.allValues()
      state.budget.refresh(with: remote)
      var keys = Set(local.values.keys).union(remote.keys).union(state.ledger.entries.keys)
      keys = keys.filter { KeyPolicy.exclusion(of: $0) == nil }
      let admitted = admit(keys.sorted(), &state)
      let written = reconcile(admitted, local: local.values, remote: remote, policy: .preferLocal, &state)
      collectTombstones(in: remote, skipping: written, &state)
    }
  }

  /// Reconciles only `keys`, in both directions, with the rules of ``sync()``.
  ///
  /// ```swift
  /// coordinator.sync(keys: ["theme", "fontSize"])
  /// ```
  public func sync(keys: [String]) {
    perform { state in
      removeLegacyStamp(&state)
      let admitted = admit(keys, &state)
      let local = domain.persistentValues(of: Set(admitted))
      state.verifyEpoch(local.epoch, of: domain)
      reconcile(admitted, local: local.values, remote: storeValues(admitted), policy: .preferLocal, &state)
    }
  }

  /// Reconciles only `keys`; see ``sync(keys:)-([String])``.
  public func sync(keys: String...) {
    sync(keys: keys)
  }

  /// Adds keys whose inbound store changes and local edits are applied automatically.
  /// A key Zephyr can never sync (too long, a system or bookkeeping key) is refused and
  /// listed in ``status``.
  public func addKeysToBeMonitored(keys: [String]) {
    perform { state in
      state.monitoredKeys.formUnion(admit(keys, &state))
    }
  }

  /// Adds keys to monitor; see ``addKeysToBeMonitored(keys:)-([String])``.
  public func addKeysToBeMonitored(keys: String...) {
    addKeysToBeMonitored(keys: keys)
  }

  /// Stops applying inbound changes and local edits of `keys` automatically. Their
  /// values stay where they are; ``sync()`` still covers them.
  public func removeKeysFromBeingMonitored(keys: [String]) {
    perform { state in
      state.monitoredKeys.subtract(keys)
    }
  }

  /// Stops monitoring keys; see ``removeKeysFromBeingMonitored(keys:)-([String])``.
  public func removeKeysFromBeingMonitored(keys: String...) {
    removeKeysFromBeingMonitored(keys: keys)
  }

  // MARK: Operations

  /// Runs `body` as one operation, exclusively: events that arrived meanwhile on this
  /// thread are applied, the store synchronized once if it was written, the ledger saved;
  /// then, outside the lock, the buffered log lines are emitted and the change
  /// notification posted.
  @discardableResult
  func perform<Result>(_ body: (inout EngineState) -> Result) -> Result {
    let (result, effects) = Self.$operating.withValue(ObjectIdentifier(self)) {
      state.withLock { state in
        if !state.budget.isPrimed { state.budget.refresh(with: store.allValues()) }
        let result = body(&state)
        // Events posted to us on this thread while we were writing.
        while let change = mailbox.withLock({ $0.events.isEmpty ? nil : $0.events.removeFirst() }) {
          handle(change, &state)
        }
        if state.storeWritten {
          state.storeWritten = false
          if state.configuration.synchronizeOnChange, !state.crashed { store.synchronize() }
        }
        state.checkBudgetThreshold()
        saveLedgerIfNeeded(&state)
        return (result, state.takeEffects())
      }
    }
    emit(effects)
    return result
  }

  private func emit(_ effects: EngineState.Effects) {
    let handler = effects.logHandler
    for message in effects.logs {
      if let handler { handler(message) } else { DefaultLogSink.write(message) }
    }
    guard !effects.changedKeys.isEmpty else { return }
    let keys = effects.changedKeys.sorted()
    // Weak: a coordinator released before the main queue runs posts nothing more.
    DispatchQueue.main.async { [weak self] in
      guard let self else { return }
      NotificationCenter.default.post(
        name: Zephyr.keysDidChangeOnCloudNotification, object: self,
        userInfo: [Zephyr.changedKeysUserInfoKey: keys])
    }
  }

  /// Appends the operation's ledger changes to the file, or rewrites it when it is new,
  /// was reset, or has grown to more than twice its entries.
  func saveLedgerIfNeeded(_ state: inout EngineState) {
    guard state.ledgerNeedsSnapshot || !state.ledgerChanges.isEmpty, state.mayWrite(.ledger) else { return }
    let appended = state.ledgerRecords + state.ledgerChanges.count
    var compact = state.ledgerNeedsSnapshot || appended > 2 * state.ledger.entries.count + 64
    if !compact {
      do {
        try ledgerFile.append(state.ledgerChanges)
        state.ledgerRecords = appended
      } catch {
        compact = true
      }
    }
    if compact {
      do {
        try ledgerFile.writeSnapshot(state.ledger)
        state.ledgerRecords = state.ledger.entries.count
      } catch {
        state.warn("could not save the ledger at \(ledgerFile.url.path): \(error.localizedDescription)")
        state.ledgerNeedsSnapshot = true
        return
      }
    }
    state.ledgerChanges = [:]
    state.ledgerNeedsSnapshot = false
  }

  /// Keeps the keys Zephyr may write; records a refusal for every other one.
  func admit(_ keys: [String], _ state: inout EngineState) -> [String] {
    keys.filter { key in
      guard let refusal = KeyPolicy.refusal(of: key, limits: state.configuration.limits) else { return true }
      state.refuse(key, refusal)
      return false
    }
  }

  func storeValues(_ keys: some Sequence<String>) -> [String: PropertyListValue] {
    var values: [String: PropertyListValue] = [:]
    for key in keys {
      if let value = store.value(forKey: key) { values[key] = value }
    }
    return values
  }

  /// Zephyr 4 kept one timestamp for the whole store under `ZephyrSyncKey`; it is never
  /// synced and is removed wherever it is found.
  private func removeLegacyStamp(_ state: inout EngineState) {
    if store.value(forKey: KeyPolicy.legacySyncKey) != nil, state.mayWrite(.store(KeyPolicy.legacySyncKey)) {
      store.removeValue(forKey: KeyPolicy.legacySyncKey)
      state.debug("removed Zephyr 4's \(KeyPolicy.legacySyncKey) from the store")
    }
    if domain.containsAnyValue(forKey: KeyPolicy.legacySyncKey), state.mayWrite(.defaults(KeyPolicy.legacySyncKey)) {
      domain.remove(forKey: KeyPolicy.legacySyncKey)
    }
  }

  /// Settles the pulls a crash left written ahead but maybe not applied, at launch, before
  /// the app can edit: whether each `UserDefaults` write happened is read off the local
  /// value now, while it is still either the value from before the pull or the pulled one.
  private func settlePendingPulls() {
    let pending = state.withLock { state in state.ledger.entries.filter { $0.value.pendingPull != nil }.map(\.key) }
    guard !pending.isEmpty else { return }
    perform { state in
      let local = domain.persistentValues(of: Set(pending)).values
      for key in pending {
        state.setLedger(key, state.ledger[key]?.resolved(local: local[key]))
      }
      state.debug("settled \(pending.count) pull(s) interrupted before the last exit")
    }
  }

  // MARK: Observers

  private func startObserving() {
    let storeToken = store.observeExternalChanges { [weak self] change in
      self?.receive(change)
    }
    let center = NotificationCenter.default
    let observer = Locked<(any NSObjectProtocol)?>(nil)
    observer.withLock {
      $0 = center.addObserver(forName: UserDefaults.didChangeNotification, object: nil, queue: nil) {
        [weak self] note in
        guard let self, note.object == nil || domain.isBacked(by: note.object as AnyObject) else { return }
        userDefaultsDidChange()
      }
    }
    let defaultsToken = ObservationToken {
      observer.withLock { registration in
        if let registration { center.removeObserver(registration) }
        registration = nil
      }
    }
    observations.withLock { $0 = [storeToken, defaultsToken] }
  }

  /// An external change from the store: applied at once, or, when it arrives on the
  /// thread of our own operation, right after that operation.
  func receive(_ change: ExternalChange) {
    if Self.operating == ObjectIdentifier(self) {
      mailbox.withLock { $0.events.append(change) }
      return
    }
    perform { state in handle(change, &state) }
  }

  /// A change of this coordinator's `UserDefaults` instance (or an announcement without
  /// an object): schedule one coalesced push of the monitored keys' local edits. Our own
  /// writes are recognised and ignored. Edits made through another instance of the same
  /// suite are not announced to us; ``sync()`` still finds them through the ledger.
  func userDefaultsDidChange() {
    guard Self.operating != ObjectIdentifier(self) else { return }
    let schedule = mailbox.withLock { mailbox -> Bool in
      mailbox.localEditsPending = true
      guard !mailbox.flushScheduled else { return false }
      mailbox.flushScheduled = true
      return true
    }
    guard schedule else { return }
    localEditQueue.async { [weak self] in
      self?.pushPendingLocalEdits()
    }
  }

  /// Pushes the monitored keys' local edits that a `didChangeNotification` announced.
  func pushPendingLocalEdits() {
    mailbox.withLock { $0.flushScheduled = false }
    perform { state in pushPendingLocalEdits(&state) }
  }

  /// Blocks until every local-edit push that a `didChangeNotification` scheduled has
  /// run. For tests and benchmarks: an app never needs to wait.
  public func waitForPendingLocalEdits() {
    localEditQueue.sync {}
  }
}

/// What reaches a coordinator outside its operations.
struct Mailbox {
  var events: [ExternalChange] = []
  var localEditsPending = false
  var flushScheduled = false
}

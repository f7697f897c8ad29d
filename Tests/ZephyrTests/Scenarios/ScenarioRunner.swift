import Foundation
import ZephyrTesting

@testable import Zephyr

/// Runs a ``Scenario`` on a ``Harness`` (one `SimulatedCloud`, a real `UserDefaults`
/// suite, ledger and coordinator per device), tracks causality, then stops editing,
/// runs rounds and checks the invariants of the merge rules (MergeSemantics.md):
/// convergence within three rounds, no overwritten value back, no resurrected delete,
/// and a quiet further round.
///
/// Account switches: a device switched away comes back to the default account before
/// the final rounds, and everything is checked in the default account. An account
/// change drops unsent writes, resets history, lets the new account's values win and
/// uploads local-only values, so writes made in another account, writes a device held
/// when it switched or that no other device had held, and edits made without history,
/// do not count as
/// overwriting an older write (see ``TrackedWrite/overwrites``); a value a device holds
/// across a switch may come back as a new write (``CausalHistory/recordImport(of:by:order:account:)``).
final class ScenarioRunner {
  /// The app extension's process in scenarios with a ``Scenario/widgetHost``.
  static let widget = "W"
  /// The rounds after which every device agrees: three (DESIGN §4), and with k devices
  /// that may all have edited one strategy key concurrently, k + 1 (the store keeps one
  /// upload per key per round).
  var promisedRounds: Int { max(3, scenario.devices.count + 1) }
  /// The rounds after which a disagreement is reported as no convergence at all.
  var maximumRounds: Int { max(6, promisedRounds + 3) }

  let scenario: Scenario
  let harness: Harness
  var history = CausalHistory()
  /// Each device's local values as last observed.
  var known: [String: [String: PropertyListValue]] = [:]
  /// The write whose state each device's local value is.
  var localWrite: [String: [String: String]] = [:]
  /// Per device and key, its local writes while the latest has not been pushed (each
  /// replaced the one before it locally), with the record the device's store held when
  /// the first was made.
  var unpushed: [String: [String: (ids: [String], before: PropertyListValue?)]] = [:]
  var accounts: [String: String] = [:]
  /// New installs before their initial download: the store discards what they write, so
  /// their writes may legitimately lose to the cloud, whatever the device ids.
  var awaitingDownload: Set<String> = []
  var outcome = ScenarioOutcome()
  let verbose: Bool
  let extraRounds: Int

  /// Seconds on every device's clock (one counter, ticking at each reading).
  private let ticks = Locked(0.0)
  /// The default tombstone lifetime; a ``ScenarioStep/passTime`` step passes it.
  static let tombstoneLifetime: TimeInterval = 30 * 24 * 60 * 60

  private init(
    _ scenario: Scenario, verbose: Bool, extraRounds: Int, suitePrefix: String, world: World, backend: Backend
  ) {
    self.extraRounds = extraRounds
    harness = Harness(suitePrefix: suitePrefix, ledgerRoot: SuitePool.ledgerRoot, world: world, backend: backend)
    self.scenario = scenario
    self.verbose = verbose
    // Tombstone dates come from one counter, so every tombstone is told apart.
    let ticks = self.ticks
    let clock: @Sendable () -> Date = {
      ticks.withLock { tick in
        tick += 1
        return Date(timeIntervalSince1970: 1_700_000_000 + tick)
      }
    }
    for name in scenario.devices {
      if name == scenario.newInstall { awaitingDownload.insert(name) }
      let host = name == Self.widget ? scenario.widgetHost : nil
      if name == Self.widget, host == nil { continue }
      let shared = host != nil || name == scenario.widgetHost
      harness.device(
        name, monitored: scenario.keys, initiallyDownloaded: name != scenario.newInstall, sharing: host
      ) { configuration in
        if shared { configuration.sharedByProcesses = true }
        configuration.mergeStrategies = scenario.strategies.mapValues(\.merge)
        configuration.clock = clock
        configuration.tombstoneLifetime = Self.tombstoneLifetime
        // One synchronize() per batch that wrote: a deferred call arms a timer of real
        // time, which (over CloudKit) hands the queued changes to the sync engine again
        // at a moment of the system's choosing, so a slow run could differ from a fast one.
        configuration.synchronizeInterval = 0
        configuration.debugEnabled = verbose
      }
      accounts[name] = SimulatedCloud.defaultAccount
      known[name] = [:]
    }
  }

  /// Runs `scenario`; `extraRounds` rounds after agreement must write nothing and change
  /// nothing.
  static func run(
    _ scenario: Scenario, verbose: Bool = false, extraRounds: Int = 1, world: World = .apple,
    backend: Backend = .keyValue
  ) -> ScenarioOutcome {
    SuitePool.shared.withPrefix(world: world) { prefix in
      let runner = ScenarioRunner(
        scenario, verbose: verbose, extraRounds: extraRounds, suitePrefix: prefix, world: world, backend: backend)
      for (index, step) in scenario.steps.enumerated() {
        runner.execute(step, at: index)
      }
      runner.finish()
      let outcome = runner.outcome
      runner.releaseCoordinators()
      return outcome
    }
  }

  /// Lets the main queue run what the coordinators queued on it (each operation that
  /// changed local values queues its `keysDidChangeOnCloudNotification` there). A block
  /// that held its coordinator strongly once kept a released coordinator observing, which
  /// made relaunches nondeterministic and, with reused suite names, leaked values into
  /// the next scenario; ``CrashPointTests/relaunchReleasesTheOldCoordinatorAtOnce()``
  /// guards the fix, and waiting here keeps scenarios deterministic regardless.
  ///
  /// It waits for a block queued behind that work rather than calling
  /// `DispatchQueue.main.sync`: on Linux, after `dispatchMain()`, the main queue has no
  /// thread of its own, and thousands of synchronous submissions from parallel scenarios
  /// are a path of libdispatch the tests need not depend on.
  static func drainMainQueue() {
    guard !Thread.isMainThread else { return }
    let drained = DispatchSemaphore(value: 0)
    DispatchQueue.main.async { drained.signal() }
    drained.wait()
  }

  private func releaseCoordinators() {
    Self.drainMainQueue()
    for name in scenario.devices { device(name).shutDown() }
    Self.drainMainQueue()
  }

  private func restart(_ name: String) {
    device(name).restart()
    Self.drainMainQueue()
  }

  func device(_ name: String) -> TestDevice {
    harness.device(name)
  }

  // MARK: Steps

  /// Runs `body`; when verbose, adds `label` and the decision logs it caused to the
  /// transcript.
  func transcribe(_ label: @autoclosure () -> String, _ body: () -> Void) {
    guard verbose else { return body() }
    let counts = scenario.devices.map { device($0).logs.withLock { $0.count } }
    body()
    outcome.transcript.append(label())
    for (position, name) in scenario.devices.enumerated() {
      let lines = device(name).logs.withLock { Array($0.dropFirst(counts[position])) }
      outcome.transcript += lines.map { "    \(name): \($0.text)" }
    }
  }

  func execute(_ step: ScenarioStep, at index: Int) {
    transcribe("\(index): \(step)") { perform(step, at: index) }
  }

  private func perform(_ step: ScenarioStep, at index: Int) {
    switch step {
    case .set(let name, let key, let seed):
      observeSharedSuite(name)
      let id = "\(name)\(index)"
      let prior = device(name).value(key)
      let value =
        scenario.strategies[key].map { $0.value(id: id, index: index, seed: seed, current: prior) }
        ?? Self.value(id: id, seed: seed)
      let historyless = hasNoHistory(name, key) || awaitingDownload.contains(storeName(name))
      let before = device(name).syncStore.value(forKey: key)
      device(name).set(value, key)
      history.recordWrite(
        id: id, key: key, value: value, prior: prior, writer: name, order: index, account: account(name))
      if historyless { history.disarm(id) }
      unpushed[name, default: [:]][key, default: ([], before)].ids.append(id)
      settlePushed(name)
      known[name, default: [:]][key] = value
      localWrite[name, default: [:]][key] = id
      observeMergedEdit(name, key, wrote: value)
    case .remove(let name, let key):
      observeSharedSuite(name)
      guard known[name]?[key] != nil else { break }
      let id = "\(name)\(index)x"
      let prior = device(name).value(key)
      let historyless = hasNoHistory(name, key) || awaitingDownload.contains(storeName(name))
      let before = device(name).syncStore.value(forKey: key)
      device(name).remove(key)
      history.recordWrite(
        id: id, key: key, value: nil, prior: prior, writer: name, order: index, account: account(name))
      if historyless { history.disarm(id) }
      unpushed[name, default: [:]][key, default: ([], before)].ids.append(id)
      settlePushed(name)
      known[name]?[key] = nil
      localWrite[name, default: [:]][key] = id
      observeMergedEdit(name, key, wrote: nil)
    case .notify(let name):
      notify(name)
    case .sync(let name):
      device(name).coordinator.sync()
    case .syncKeys(let name, let keys):
      device(name).coordinator.sync(keys: keys)
    case .upload(let name):
      harness.driver.upload(from: storeName(name))
    case .download(let name, let notify):
      harness.driver.download(to: storeName(name), notify: notify)
      awaitingDownload.remove(storeName(name))
    case .event(let name, let keys, let initialSync):
      // Apple reports `initialSync` with a device's initial download only (a new install);
      // to a device that had it, a replayed event of that kind is a server change. (Stray
      // `initialSync` events are fuzzed for safety in `FuzzTests`.)
      let initial = initialSync && awaitingDownload.contains(storeName(name))
      harness.driver.post(
        ExternalChange(reason: initial ? .initialSync : .serverChange, keys: keys), to: storeName(name))
    case .switchAccount(let name, let account):
      for id in (localWrite[name] ?? [:]).values.sorted() { history.disarm(id) }
      for (key, strategy) in scenario.strategies.sorted(by: { $0.key < $1.key }) where strategy.isCollection {
        for id in known[name]?[key].flatMap({ heldWrites(key, $0) }) ?? [] { history.disarm(id) }
      }
      for write in history.writes.values.sorted(by: { $0.id < $1.id })
      where write.writer == name && !history.seenElsewhere.contains(write.id) {
        history.disarm(write.id)
      }
      // A write every device that knew it has since forgotten, and the server no longer
      // holds, may be lost (only the store's last-writer-wins had it, and let it go).
      let server = harness.driver.serverValues
      for id in history.forget(name) {
        guard let write = history.writes[id], !write.isForeign else { continue }
        let held: Bool
        switch RemoteState(storeValue: server[write.key]) {
        case .record(let record): held = record.content.value == write.value
        case .foreign(let value): held = value == write.value
        default: held = false
        }
        if !held { history.disarm(id) }
      }
      unpushed[name] = nil
      for key in scenario.keys {
        if scenario.strategies[key]?.isCollection == true, let held = known[name]?[key] {
          // A strategy key's value may be a merge no single write made: imported as held.
          history.recordImport(of: held, key: key, by: name, order: index, account: account)
        } else if let id = localWrite[name]?[key] {
          history.recordImport(of: id, by: name, order: index, account: account)
        }
      }
      harness.driver.switchAccount(of: storeName(name), to: account)
      awaitingDownload.remove(storeName(name))
      accounts[name] = account
    case .restart(let name):
      restart(name)
    case .foreignWrite(let key, let seed):
      let id = "F\(index)"
      var random = SeededGenerator(seed: seed)
      let value = WriteTag.value(id: id, payload: RandomValues.value(using: &random, depth: 2), shape: Int(seed % 3))
      harness.driver.setServerValue(value, forKey: key)
      outcome.facts[key, default: KeyFacts()].foreignWrite = true
      history.recordWrite(
        id: id, key: key, value: value, writer: CausalHistory.foreignWriter, order: index,
        account: SimulatedCloud.defaultAccount)
      // A write of the key still in flight will overwrite it on the server, whoever takes
      // it meanwhile: no device can tell which of the two came first.
      if harness.driver.deviceNames.contains(where: { harness.driver.pendingKeys(of: $0).contains(key) }) {
        history.contest(id)
      }
    case .foreignRemove(let key):
      harness.driver.removeServerValue(forKey: key)
      outcome.facts[key, default: KeyFacts()].foreignWrite = true
      history.recordWrite(
        id: "F\(index)x", key: key, value: nil, writer: CausalHistory.foreignWriter, order: index,
        account: SimulatedCloud.defaultAccount)
    case .crash(let name, let before, let operation):
      crash(name, before: before, during: operation)
    case .tamper(let key, let value):
      harness.driver.setServerValue(value, forKey: key)
    case .wrongTypeInStore(let key):
      harness.driver.setServerValue(.string("wrong type \(index)"), forKey: key)
    case .passTime:
      ticks.withLock { $0 += Self.tombstoneLifetime + 24 * 60 * 60 }
      // A tombstone collected from now on no longer defends its delete against a device
      // that never saw it and still holds a value.
      var holding: [(device: String, key: String, account: String)] = []
      for name in scenario.devices.sorted() {
        for key in scenario.keys where known[name]?[key] != nil {
          holding.append((name, key, accounts[name] ?? SimulatedCloud.defaultAccount))
        }
      }
      history.tombstonesExpired(holding: holding)
    }
    switch step {
    case .set, .remove, .foreignWrite, .foreignRemove, .wrongTypeInStore, .passTime, .tamper: break
    // An upload reports nothing to the uploader on the key-value store; on CloudKit a
    // save that lost to another device's comes back as a serverChange, merged at once.
    case .upload(let name): if harness.backend == .cloudKit { observe(name) }
    default: if let name = step.device { observe(name) }
    }
  }

  /// The value a `.set` step at `index` by `device` writes: a random payload from
  /// `seed`, tagged with the write's id (`<device><index>`).
  static func value(id: String, seed: UInt64) -> PropertyListValue {
    var random = SeededGenerator(seed: seed)
    let payload = RandomValues.value(using: &random, depth: seed % 4 == 0 ? 1 : 2)
    return WriteTag.value(id: id, payload: payload, shape: Int(seed % 3))
  }

  /// Whether the device's ledger has no entry for the key. An edit made then is, to the
  /// engine, a never-synced value, which any record in the store beats (the merge rule "cloud
  /// history beats a never-synced device"). Without a lost ledger such an edit follows
  /// nothing, so this matters only after an account change reset the ledger while the
  /// device kept values it had seen.
  func hasNoHistory(_ name: String, _ key: String) -> Bool {
    device(name).coordinator.engine.state.withLock { $0.ledger[key] == nil }
  }

  /// The push of a strategy key's edit may merge it with the record the device's store
  /// held (`before`): the device then holds what the merge wrote locally (a `.max` key
  /// edited below the store's value).
  private func observeMergedEdit(
    _ name: String, _ key: String, wrote value: PropertyListValue?
  ) {
    guard scenario.strategies[key] != nil else { return }
    if device(name).value(key) != value { observe(name) }
  }

  /// A process sharing its suite sees the other process's writes there as they are
  /// made: it holds them before it writes.
  private func observeSharedSuite(_ name: String) {
    if scenario.widgetHost != nil, name == Self.widget || name == scenario.widgetHost { observe(name) }
  }

  /// The store a process uses: its own device's, or for the widget its host's.
  func storeName(_ name: String) -> String {
    name == Self.widget ? (scenario.widgetHost ?? name) : name
  }

  func account(_ name: String) -> String {
    accounts[name] ?? SimulatedCloud.defaultAccount
  }

  func notify(_ name: String) {
    let device = device(name)
    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: device.defaults)
    device.coordinator.waitForPendingLocalEdits()
  }

  private func crash(_ name: String, before: Int, during operation: ScenarioStep.Operation) {
    let device = device(name)
    let points = Locked<[WritePoint]>([])
    device.coordinator.engine.testHooks.withLock { hooks in
      hooks.crashBefore = { point in
        points.withLock { points in
          points.append(point)
          return points.count == before
        }
      }
    }
    switch operation {
    case .sync: device.coordinator.sync()
    case .syncKeys(let keys): device.coordinator.sync(keys: keys)
    case .download(let notify):
      harness.driver.download(to: storeName(name), notify: notify)
      awaitingDownload.remove(storeName(name))
    case .notify: notify(name)
    }
    let written = points.withLock { $0 }
    outcome.crashWritePoints.append(written.count)
    if written.count >= before {
      outcome.crashesStruck += 1
      // The ledger save that settles a batch comes after all its writes.
      for case .defaults(let key) in written.prefix(before - 1) {
        outcome.facts[key, default: KeyFacts()].crashLeftPullPending = true
      }
    }
    restart(name)
  }
}

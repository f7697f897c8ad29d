import Foundation
import ZephyrTesting

@testable import Zephyr

/// Runs a ``Scenario`` on a ``Harness`` (one `SimulatedCloud`, a real `UserDefaults`
/// suite, ledger and coordinator per device), tracks causality, then stops editing,
/// runs rounds and checks the invariants of DESIGN §4.
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
  static let maximumRounds = 6
  /// The app extension's process in scenarios with a ``Scenario/widgetHost``.
  static let widget = "W"
  static let promisedRounds = 3

  private let scenario: Scenario
  private let harness: Harness
  private var history = CausalHistory()
  /// Each device's local values as last observed.
  private var known: [String: [String: PropertyListValue]] = [:]
  /// The write whose state each device's local value is.
  private var localWrite: [String: [String: String]] = [:]
  /// Per device and key, its local writes while the latest has not been pushed (each
  /// replaced the one before it locally), with the record the device's store held when
  /// the first was made.
  private var unpushed: [String: [String: (ids: [String], before: PropertyListValue?)]] = [:]
  private var accounts: [String: String] = [:]
  /// New installs before their initial download: the store discards what they write, so
  /// their writes may legitimately lose to the cloud (DESIGN §7).
  private var awaitingDownload: Set<String> = []
  private var outcome = ScenarioOutcome()
  private let verbose: Bool
  private let extraRounds: Int

  private init(_ scenario: Scenario, verbose: Bool, extraRounds: Int, suitePrefix: String, world: World) {
    self.extraRounds = extraRounds
    harness = Harness(suitePrefix: suitePrefix, ledgerRoot: SuitePool.ledgerRoot, world: world)
    self.scenario = scenario
    self.verbose = verbose
    // Tombstone dates come from one counter, so every tombstone is told apart.
    let ticks = Locked(0.0)
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
        configuration.clock = clock
        configuration.tombstoneLifetime = nil
        configuration.debugEnabled = verbose
      }
      accounts[name] = SimulatedCloud.defaultAccount
      known[name] = [:]
    }
  }

  /// Runs `scenario`; `extraRounds` rounds after agreement must write nothing and change
  /// nothing.
  static func run(
    _ scenario: Scenario, verbose: Bool = false, extraRounds: Int = 1, world: World = .apple
  ) -> ScenarioOutcome {
    SuitePool.shared.withPrefix(world: world) { prefix in
      let runner = ScenarioRunner(
        scenario, verbose: verbose, extraRounds: extraRounds, suitePrefix: prefix, world: world)
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
  static func drainMainQueue() {
    guard !Thread.isMainThread else { return }
    DispatchQueue.main.sync {}
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

  private func device(_ name: String) -> TestDevice {
    harness.device(name)
  }

  // MARK: Steps

  /// Runs `body`; when verbose, adds `label` and the decision logs it caused to the
  /// transcript.
  private func transcribe(_ label: @autoclosure () -> String, _ body: () -> Void) {
    guard verbose else { return body() }
    let counts = scenario.devices.map { device($0).logs.withLock { $0.count } }
    body()
    outcome.transcript.append(label())
    for (position, name) in scenario.devices.enumerated() {
      let lines = device(name).logs.withLock { Array($0.dropFirst(counts[position])) }
      outcome.transcript += lines.map { "    \(name): \($0.text)" }
    }
  }

  private func execute(_ step: ScenarioStep, at index: Int) {
    transcribe("\(index): \(step)") { perform(step, at: index) }
  }

  private func perform(_ step: ScenarioStep, at index: Int) {
    switch step {
    case .set(let name, let key, let seed):
      let id = "\(name)\(index)"
      let value = Self.value(id: id, seed: seed)
      let historyless = hasNoHistory(name, key) || awaitingDownload.contains(storeName(name))
      let before = device(name).store.value(forKey: key)
      device(name).set(value, key)
      history.recordWrite(id: id, key: key, value: value, writer: name, order: index, account: account(name))
      if historyless { history.disarm(id) }
      unpushed[name, default: [:]][key, default: ([], before)].ids.append(id)
      settlePushed(name)
      known[name, default: [:]][key] = value
      localWrite[name, default: [:]][key] = id
    case .remove(let name, let key):
      guard known[name]?[key] != nil else { break }
      let id = "\(name)\(index)x"
      let historyless = hasNoHistory(name, key) || awaitingDownload.contains(storeName(name))
      let before = device(name).store.value(forKey: key)
      device(name).remove(key)
      history.recordWrite(id: id, key: key, value: nil, writer: name, order: index, account: account(name))
      if historyless { history.disarm(id) }
      unpushed[name, default: [:]][key, default: ([], before)].ids.append(id)
      settlePushed(name)
      known[name]?[key] = nil
      localWrite[name, default: [:]][key] = id
    case .notify(let name):
      notify(name)
    case .sync(let name):
      device(name).coordinator.sync()
    case .syncKeys(let name, let keys):
      device(name).coordinator.sync(keys: keys)
    case .upload(let name):
      harness.cloud.upload(from: storeName(name))
    case .download(let name, let notify):
      harness.cloud.download(to: storeName(name), notify: notify)
      awaitingDownload.remove(storeName(name))
    case .event(let name, let keys, let initialSync):
      // Apple reports `initialSync` with a device's initial download only (a new install);
      // to a device that had it, a replayed event of that kind is a server change. (Stray
      // `initialSync` events are fuzzed for safety in `FuzzTests`.)
      let initial = initialSync && awaitingDownload.contains(storeName(name))
      harness.cloud.post(
        ExternalChange(reason: initial ? .initialSync : .serverChange, keys: keys), to: storeName(name))
    case .switchAccount(let name, let account):
      for id in (localWrite[name] ?? [:]).values { history.disarm(id) }
      for write in history.writes.values where write.writer == name && !history.seenElsewhere.contains(write.id) {
        history.disarm(write.id)
      }
      history.forget(name)
      unpushed[name] = nil
      for key in scenario.keys {
        guard let id = localWrite[name]?[key] else { continue }
        history.recordImport(of: id, by: name, order: index, account: account)
      }
      harness.cloud.switchAccount(of: storeName(name), to: account)
      awaitingDownload.remove(storeName(name))
      accounts[name] = account
    case .restart(let name):
      restart(name)
    case .foreignWrite(let key, let seed):
      let id = "F\(index)"
      var random = SeededGenerator(seed: seed)
      let value = WriteTag.value(id: id, payload: RandomValues.value(using: &random, depth: 2), shape: Int(seed % 3))
      harness.cloud.setServerValue(value, forKey: key)
      outcome.facts[key, default: KeyFacts()].foreignWrite = true
      history.recordWrite(
        id: id, key: key, value: value, writer: CausalHistory.foreignWriter, order: index,
        account: SimulatedCloud.defaultAccount)
      // A write of the key still in flight will overwrite it on the server, whoever takes
      // it meanwhile: no device can tell which of the two came first.
      if harness.cloud.deviceNames.contains(where: { harness.cloud.pendingKeys(of: $0).contains(key) }) {
        history.contest(id)
      }
    case .foreignRemove(let key):
      harness.cloud.removeServerValue(forKey: key)
      outcome.facts[key, default: KeyFacts()].foreignWrite = true
      history.recordWrite(
        id: "F\(index)x", key: key, value: nil, writer: CausalHistory.foreignWriter, order: index,
        account: SimulatedCloud.defaultAccount)
    case .crash(let name, let before, let operation):
      crash(name, before: before, during: operation)
    case .tamper(let key, let value):
      harness.cloud.setServerValue(value, forKey: key)
    }
    switch step {
    case .set, .remove, .upload, .foreignWrite, .foreignRemove, .tamper: break
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
  /// engine, a never-synced value, which any record in the store beats (DESIGN §4: "cloud
  /// history beats a never-synced device"). Without a lost ledger such an edit follows
  /// nothing, so this matters only after an account change reset the ledger while the
  /// device kept values it had seen.
  private func hasNoHistory(_ name: String, _ key: String) -> Bool {
    device(name).coordinator.state.withLock { $0.ledger[key] == nil }
  }

  /// The store a process uses: its own device's, or for the widget its host's.
  private func storeName(_ name: String) -> String {
    name == Self.widget ? (scenario.widgetHost ?? name) : name
  }

  private func account(_ name: String) -> String {
    accounts[name] ?? SimulatedCloud.defaultAccount
  }

  private func notify(_ name: String) {
    let device = device(name)
    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: device.defaults)
    device.coordinator.waitForPendingLocalEdits()
  }

  private func crash(_ name: String, before: Int, during operation: ScenarioStep.Operation) {
    let device = device(name)
    let points = Locked<[WritePoint]>([])
    device.coordinator.testHooks.withLock { hooks in
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
      harness.cloud.download(to: storeName(name), notify: notify)
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

  // MARK: Observation

  /// Reads the device's local values; every value that changed names the write the
  /// device now holds, whose clock the device's clock merges.
  private func observe(_ name: String) {
    let device = device(name)
    let locals = localValues(of: device)
    let cache = device.store.cachedValues
    settleUnpushed(name, locals: locals, cache: cache)
    for key in scenario.keys where locals[key] != known[name]?[key] {
      if let value = locals[key] {
        if let id = WriteTag.id(in: value), history.writes[id]?.key == key {
          history.observe(name, writeID: id)
          localWrite[name, default: [:]][key] = id
        } else {
          localWrite[name]?[key] = nil
          outcome.violations.append(
            Violation(
              kind: .inventedValue, message: "\(name) holds \(key) = \(value.logDescription), which nobody wrote"))
        }
      } else if let tombstone = Self.tombstone(key, in: cache), let id = history.deleteID(of: tombstone) {
        history.observe(name, writeID: id)
        localWrite[name, default: [:]][key] = id
      } else {
        localWrite[name]?[key] = nil
      }
    }
    known[name] = locals
    // Tombstones this device pushed carry the delete its local state is.
    for key in scenario.keys where locals[key] == nil {
      guard let tombstone = Self.tombstone(key, in: cache), tombstone.origin == name,
        !history.isNamed(tombstone), let id = localWrite[name]?[key], history.writes[id]?.isDelete == true
      else { continue }
      history.nameTombstone(tombstone, deleteID: id)
    }
  }

  /// Edits an inbound event replaced before they were pushed overwrite nothing: an
  /// inbound store event prefers the remote value (DESIGN §4), and until an edit is
  /// pushed no other device can have seen it. A write made after the device saw a later
  /// write of another key is still such an edit while it is unpushed (in the Linux-plain
  /// world, until a sync or a notification announces it), so these are counted apart
  /// (``ScenarioOutcome/overwrittenBeforePush``), as zephyr-bench counts them.
  private func settleUnpushed(
    _ name: String, locals: [String: PropertyListValue], cache: [String: PropertyListValue]
  ) {
    settlePushed(name, cache: cache)
    for (key, edit) in unpushed[name] ?? [:] {
      guard let latest = edit.ids.last, let write = history.writes[latest] else { continue }
      if locals[key] != write.value {
        for id in edit.ids { history.disarm(id) }
        outcome.overwrittenBeforePush += 1
        unpushed[name]?[key] = nil
      }
    }
  }

  /// Forgets the unpushed edits of `name` that its store now holds as its own records.
  private func settlePushed(_ name: String, cache: [String: PropertyListValue]? = nil) {
    let cache = cache ?? device(name).store.cachedValues
    let origin = device(name).coordinator.deviceID
    for (key, edit) in unpushed[name] ?? [:] where cache[key] != edit.before {
      guard let latest = edit.ids.last, let write = history.writes[latest],
        case .record(let record) = RemoteState(storeValue: cache[key]),
        record.origin == origin, record.content.value == write.value
      else { continue }
      unpushed[name]?[key] = nil
    }
  }

  private static func tombstone(_ key: String, in values: [String: PropertyListValue]) -> CausalHistory.TombstoneID? {
    guard case .record(let record) = RemoteState(storeValue: values[key]),
      case .deleted(let date) = record.content
    else { return nil }
    return CausalHistory.TombstoneID(key: key, generation: record.generation, origin: record.origin, date: date)
  }

  /// The device's values of the scenario's keys. Read with `object(forKey:)`, several
  /// times cheaper than the persistent domain; nothing registers defaults for these keys.
  private func localValues(of device: TestDevice) -> [String: PropertyListValue] {
    var values: [String: PropertyListValue] = [:]
    for key in scenario.keys {
      if let raw = device.defaults.object(forKey: key), let value = PropertyListValue(bridging: raw) {
        values[key] = value
      }
    }
    return values
  }

  /// The device's values of the scenario's keys, from its persistent domain.
  private func persistentValues(of device: TestDevice) -> [String: PropertyListValue] {
    let domain = device.defaults.persistentDomain(forName: device.suiteName) ?? [:]
    var values: [String: PropertyListValue] = [:]
    for key in scenario.keys {
      if let raw = domain[key], let value = PropertyListValue(bridging: raw) { values[key] = value }
    }
    return values
  }

  // MARK: The end

  /// What every device and the server hold, when they all agree; otherwise `nil` and
  /// the disagreement.
  private func agreement() -> (state: [String: PropertyListValue?]?, disagreement: String) {
    let server = harness.cloud.serverValues
    var state: [String: PropertyListValue?] = [:]
    var problems: [String] = []
    let locals = scenario.devices.map { ($0, persistentValues(of: device($0))) }
    for key in scenario.keys {
      let expected: PropertyListValue?
      switch RemoteState(storeValue: server[key]) {
      case .absent: expected = nil
      case .foreign(let value): expected = value
      case .record(let record):
        if case .value(let value) = record.content { expected = value } else { expected = nil }
      case .malformed, .unsupported:
        problems.append("server holds an unreadable \(key)")
        continue
      }
      state[key] = expected
      for (name, values) in locals where values[key] != expected {
        problems.append(
          "\(key): server \(expected?.logDescription ?? "deleted"), \(name) \(values[key]?.logDescription ?? "deleted")"
        )
      }
    }
    return problems.isEmpty ? (state, "") : (nil, problems.joined(separator: "; "))
  }

  private func finish() {
    for name in scenario.devices where account(name) != SimulatedCloud.defaultAccount {
      execute(.switchAccount(name, to: SimulatedCloud.defaultAccount), at: scenario.steps.count)
    }
    var converged: [String: PropertyListValue?]?
    var disagreement = ""
    for round in 0...Self.maximumRounds {
      if round > 0 {
        transcribe("round \(round)") { harness.round() }
        for name in scenario.devices { observe(name) }
      }
      (converged, disagreement) = agreement()
      if converged != nil {
        outcome.roundsToConverge = round
        break
      }
    }
    guard let converged else {
      outcome.violations.append(
        Violation(kind: .convergence, message: "no agreement after \(Self.maximumRounds) rounds: \(disagreement)"))
      return
    }
    if let rounds = outcome.roundsToConverge, rounds > Self.promisedRounds {
      outcome.violations.append(Violation(kind: .convergence, message: "agreement took \(rounds) rounds"))
    }

    for extra in 1...max(extraRounds, 1) {
      let writes = scenario.devices.map { device($0).store.statistics.writes }
      transcribe("quiet round \(extra)") { harness.round() }
      let after = scenario.devices.map { device($0).store.statistics.writes }
      if after != writes {
        let detail = zip(scenario.devices, zip(writes, after)).filter { $1.0 != $1.1 }
          .map { "\($0.0) wrote \($0.1.1 - $0.1.0)" }
        outcome.violations.append(
          Violation(kind: .quiet, message: "round \(extra) after agreement wrote: \(detail)"))
      }
      let (again, change) = agreement()
      if again.map({ $0 != converged }) ?? true {
        outcome.violations.append(
          Violation(kind: .stability, message: "round \(extra) after agreement changed it: \(change)"))
      }
      if !outcome.violations.isEmpty { break }
    }

    for key in scenario.keys {
      let final = converged[key] ?? nil
      outcome.violations += history.violations(key: key, final: final)
    }
  }
}

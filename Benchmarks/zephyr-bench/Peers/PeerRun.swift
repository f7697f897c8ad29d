import Foundation
import Zephyr
import ZephyrTesting

/// Runs one ``PeerScenario`` on one ``PeerDesign``: three devices on one `SimulatedCloud`
/// (events delivered on the cloud's own thread, as on Apple platforms), the steps in
/// order, then every device back online and rounds of "deliver; every device syncs;
/// deliver" until the devices agree (at most six).
final class PeerRun {
  static let maximumRounds = 6
  private let scenario: PeerScenario
  private let cloud = SimulatedCloud()
  private var stores: [String: MeteredStore] = [:]
  private var clocks: [String: PeerClock] = [:]
  private var replicas: [String: PeerReplica] = [:]
  private var offline: Set<String> = []
  /// Events whose download was not announced, oldest first, for `.late`.
  private var heldBack: [String: [ExternalChange]] = [:]
  private var lastEvent: [String: ExternalChange] = [:]
  private var history = PeerHistory()
  private var tally = PeerTally()
  /// Each step and what devices held after it, when explaining.
  private(set) var transcript: [String] = []
  private let verbose: Bool

  init(_ scenario: PeerScenario, design: PeerDesign, verbose: Bool = false) {
    self.scenario = scenario
    self.verbose = verbose
    for device in PeerScenario.devices {
      // Existing installs: their store had its initial download (all start empty), so
      // no design's writes are discarded as a new install's would be.
      let store = MeteredStore(cloud.device(device, initiallyDownloaded: true))
      let clock = PeerClock()
      clock.set(PeerScenario.start.addingTimeInterval(scenario.skews[device] ?? 0))
      stores[device] = store
      clocks[device] = clock
      replicas[device] = design.replica(device: device, store: store, clock: clock, verbose: verbose)
    }
  }

  func run() -> PeerTally {
    for (index, step) in scenario.steps.enumerated() {
      setClocks(second: index)
      perform(step, at: index)
      // What the step let run, and so what could replace an unpushed write.
      if let cause = Self.cause(of: step) { observeAll(cause: cause) }
      if verbose {
        transcript += drainLogs()
        transcript.append("\(index): \(step)  \(describeState())")
      }
    }
    finish()
    for replica in replicas.values { replica.tearDown() }
    return tally
  }

  private func setClocks(second: Int) {
    for device in PeerScenario.devices {
      clocks[device]?.set(PeerScenario.start.addingTimeInterval(Double(second) + (scenario.skews[device] ?? 0)))
    }
  }

  private func replica(_ device: String) -> PeerReplica? {
    replicas[device]
  }

  /// The kind of step, for what replaced a write: `nil` for the steps that run no design
  /// code and change no device's local values (an upload only moves the device's pending
  /// writes to the server; a connection toggle only flips a flag).
  static func cause(of step: PeerStep) -> PeerReplacement? {
    switch step {
    case .edit, .delete, .sync: .ownPushOrSync
    case .download, .late, .duplicate: .inboundEvent
    case .relaunch: .relaunch
    case .upload, .toggleOnline: nil
    }
  }

  private func perform(_ step: PeerStep, at index: Int) {
    switch step {
    case .edit(let device, let key):
      let id = "\(device)\(index)"
      let value = PeerValue.value(writeID: id, step: index)
      history.record(id: id, key: key, value: value, by: device)
      replica(device)?.edit(key, value)
      tally.edits += 1
    case .delete(let device, let key):
      // Issued on every design, so that all run the same steps. On a device that holds no
      // value it changes nothing there and makes no write (counted apart); a design sees
      // the call (its observer does not fire: nothing changed).
      if replica(device)?.localValues()[key] != nil {
        history.record(id: "\(device)\(index)x", key: key, value: nil, by: device)
      } else {
        tally.removalsOfAbsentKeys += 1
      }
      replica(device)?.edit(key, nil)
      tally.edits += 1
    case .sync(let device):
      replica(device)?.sync()
    case .upload(let device):
      guard !offline.contains(device) else { return }
      cloud.upload(from: device)
      history.markPushed(server: cloud.serverValues, uploaders: [device])
    case .download(let device, let notify):
      download(device, notify: notify)
    case .late(let device):
      guard !offline.contains(device), let event = heldBack[device]?.first else { return }
      heldBack[device]?.removeFirst()
      post(event, to: device)
    case .duplicate(let device):
      guard !offline.contains(device), let event = lastEvent[device] else { return }
      post(event, to: device)
    case .toggleOnline(let device):
      if offline.remove(device) == nil { offline.insert(device) }
    case .relaunch(let device):
      replica(device)?.relaunch()
    }
  }

  private func download(_ device: String, notify: Bool) {
    guard !offline.contains(device), let store = stores[device] else { return }
    let before = store.device.cachedValues
    cloud.download(to: device, notify: notify)
    let after = store.device.cachedValues
    let changed = Set(before.keys).union(after.keys).filter { before[$0] != after[$0] }.sorted()
    guard !changed.isEmpty else { return }
    let event = ExternalChange(reason: .serverChange, keys: changed)
    if notify {
      lastEvent[device] = event
      replica(device)?.deliverPendingEvents()
    } else {
      heldBack[device, default: []].append(event)
    }
  }

  private func post(_ event: ExternalChange, to device: String) {
    cloud.post(event, to: device)
    lastEvent[device] = event
    replica(device)?.deliverPendingEvents()
  }

  private func observeAll(cause: PeerReplacement) {
    for device in PeerScenario.devices {
      history.observe(device, locals: replica(device)?.localValues() ?? [:], cause: cause)
    }
  }

  /// The designs' decision logs since the last step, indented under it.
  private func drainLogs() -> [String] {
    PeerScenario.devices.flatMap { device in (replica(device)?.drainLog() ?? []).map { "    \(device) log: \($0)" } }
  }

  private func describeState() -> String {
    PeerScenario.devices.map { device in
      let values = replica(device)?.localValues() ?? [:]
      let held = PeerScenario.keys.map { key in values[key].flatMap { PeerValue.writeIDs(in: $0).first } ?? "-" }
      return "\(device)\(offline.contains(device) ? "(off)" : ""): \(held.joined(separator: " "))"
    }.joined(separator: " | ")
  }

  // MARK: The end

  private func finish() {
    offline = []
    setClocks(second: scenario.steps.count)
    for device in PeerScenario.devices {
      while let event = heldBack[device]?.first {
        heldBack[device]?.removeFirst()
        post(event, to: device)
      }
    }
    observeAll(cause: .inboundEvent)
    var agreed = agreement()
    var round = 0
    while !agreed, round < Self.maximumRounds {
      round += 1
      setClocks(second: scenario.steps.count + round)
      deliverToAll()
      for device in PeerScenario.devices { replica(device)?.sync() }
      observeAll(cause: .ownPushOrSync)
      deliverToAll()
      agreed = agreement()
      if verbose { transcript += drainLogs() + ["round \(round)  \(describeState())"] }
    }
    judge(agreed: agreed)
  }

  /// Uploads device by device (an arrival order the server may see), so that every write
  /// the server holds, even briefly, is seen there.
  private func deliverToAll() {
    for device in PeerScenario.devices {
      cloud.upload(from: device)
      history.markPushed(server: cloud.serverValues, uploaders: [device])
    }
    for device in PeerScenario.devices { download(device, notify: true) }
    observeAll(cause: .inboundEvent)
  }

  private func agreement() -> Bool {
    let locals = PeerScenario.devices.map { replica($0)?.localValues() ?? [:] }
    return locals.allSatisfy { $0 == locals.first }
  }

  private func judge(agreed: Bool) {
    tally.notConverged = agreed ? 0 : 1
    if !agreed { tally.findings.append("seed \(scenario.seed): no agreement after \(Self.maximumRounds) rounds") }
    let finals = PeerScenario.devices.map { replica($0)?.localValues() ?? [:] }
    for key in PeerScenario.keys {
      if let lost = finals.first(where: { history.isLost(key: key, final: $0[key]) }) {
        tally.lostWrites += 1
        if agreed { tally.lostWritesConverged += 1 }
        tally.findings.append("seed \(scenario.seed): lost write of \(key), final \(describe(lost[key]))")
      }
      if let back = finals.first(where: { history.isResurrected(key: key, final: $0[key]) }) {
        tally.resurrectedDeletes += 1
        tally.findings.append("seed \(scenario.seed): resurrected \(key), final \(describe(back[key]))")
      }
    }
    for write in history.writes.values { tally.count(history.fate(of: write)) }
    if tally.accounted != tally.edits {
      tally.findings.append("seed \(scenario.seed): \(tally.edits) edits, \(tally.accounted) accounted for")
    }
    let replaced = history.replacedBeforePush
    if verbose, !replaced.isEmpty { tally.findings.append("replaced before push: \(replaced.joined(separator: ", "))") }
    for store in stores.values {
      tally.storeWrites += store.device.statistics.writes
      tally.synchronizeCalls += store.device.statistics.synchronizeCalls
      tally.bytes += store.bytesWritten
    }
    tally.extraStoreKeys = Set(cloud.serverValues.keys).subtracting(PeerScenario.keys).count
  }

  private func describe(_ value: PropertyListValue?) -> String {
    value.flatMap { PeerValue.writeIDs(in: $0).first } ?? "deleted"
  }
}

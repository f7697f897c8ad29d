import Foundation
import ZephyrTesting

@testable import Zephyr

extension ScenarioRunner {
  // MARK: The end

  /// What every device and the server hold, when they all agree; otherwise `nil` and
  /// the disagreement.
  private func agreement() -> (state: [String: PropertyListValue?]?, disagreement: String) {
    let server = harness.driver.serverValues
    var state: [String: PropertyListValue?] = [:]
    var problems: [String] = []
    let locals = scenario.devices.map { ($0, persistentValues(of: device($0))) }
    for key in scenario.keys {
      let expected: PropertyListValue?
      switch RemoteState(storeValue: server[key]) {
      case .absent: expected = nil
      case .foreign where scenario.strategies[key] != nil:
        // A value the strategy cannot merge, no edit replaced: the devices agree among
        // themselves, each naming the key in its status (see ``ScenarioStep/wrongTypeInStore(_:)``).
        let (value, blocked) = blockedAgreement(key, locals: locals)
        state[key] = value
        problems += blocked
        continue
      case .foreign(let value): expected = value
      case .record(let record):
        if case .value(let value) = record.content { expected = value } else { expected = nil }
      case .replica(let record):
        let value = record.state.value(strategy: scenario.strategies[key]?.merge ?? .lastWriterWins, key: key)
        state[key] = value
        for (name, values) in locals where !record.state.shows(values[key], merged: value) {
          problems.append(
            "\(key): server \(value?.logDescription ?? "deleted"), \(name) \(values[key]?.logDescription ?? "deleted")")
        }
        // A strategy key agrees when the merge states do, not only the values: a sibling
        // hidden behind an equal value is a difference (see ReplicaState).
        for name in scenario.devices {
          let held = device(name).coordinator.engine.state.withLock { $0.ledger[key]?.state }
          if held != record.state { problems.append("\(key): \(name)'s merge state is not the server's") }
        }
        continue
      case .malformed, .unreadableCompressed, .unsupported:
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

  /// The value every device holds of strategy key `key` while the store holds a value
  /// its strategy cannot merge, and what disagrees: the devices' values and merge states
  /// must be one, and each must name the key in its `status`.
  private func blockedAgreement(
    _ key: String, locals: [(String, [String: PropertyListValue])]
  ) -> (PropertyListValue?, [String]) {
    var problems: [String] = []
    let value = locals.first?.1[key]
    let state = scenario.devices.first.flatMap { name in
      device(name).coordinator.engine.state.withLock { $0.ledger[key]?.state }
    }
    for (name, values) in locals where values[key] != value {
      problems.append("\(key): the store's value cannot merge, and \(name) holds another value than the first device")
    }
    for name in scenario.devices {
      let coordinator = device(name).coordinator
      if coordinator.engine.state.withLock({ $0.ledger[key]?.state }) != state {
        problems.append("\(key): the store's value cannot merge, and \(name)'s merge state is not the first device's")
      }
      guard case .strategyCannotMerge? = coordinator.status.refusedKeys[key] else {
        problems.append("\(key): the store's value cannot merge, and \(name)'s status does not name it")
        continue
      }
    }
    return (value, problems)
  }

  func finish() {
    for name in scenario.devices where account(name) != SimulatedCloud.defaultAccount {
      execute(.switchAccount(name, to: SimulatedCloud.defaultAccount), at: scenario.steps.count)
    }
    var converged: [String: PropertyListValue?]?
    var disagreement = ""
    for round in 0...maximumRounds {
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
        Violation(kind: .convergence, message: "no agreement after \(maximumRounds) rounds: \(disagreement)"))
      return
    }
    if let rounds = outcome.roundsToConverge, rounds > promisedRounds {
      outcome.violations.append(Violation(kind: .convergence, message: "agreement took \(rounds) rounds"))
    }

    // Quiet for good: with many devices, two rounds after agreement write nothing.
    let quietRounds = max(extraRounds, Scenario.hasManyDevices(seed: scenario.seed) ? 2 : 1)
    for extra in 1...quietRounds {
      let stores = scenario.devices.map { device($0).syncStore }
      let writes = stores.map(\.writeCount)
      let server = Set(harness.driver.serverValues.filter { Self.isTombstone($0.value) }.keys)
      let tombstones = stores.map { store in
        server.union(store.cachedValues.filter { Self.isTombstone($0.value) }.keys)
      }
      transcribe("quiet round \(extra)") { harness.round() }
      let after = stores.map(\.writeCount)
      // Collecting a tombstone whose lifetime passed (see ``ScenarioStep/passTime``)
      // changes no device's value: a device may remove each tombstone that it or the
      // server held once (a device that first pulls it then collects it too).
      let collected = zip(stores, tombstones).map { store, keys in
        keys.filter { store.cachedValues[$0] == nil }.count
      }
      if (0..<stores.count).contains(where: { after[$0] - writes[$0] > collected[$0] }) {
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
      if let strategy = scenario.strategies[key] {
        outcome.violations += history.violations(key: key, final: final, strategy: strategy)
      } else {
        outcome.violations += history.violations(key: key, final: final)
      }
    }
  }

  /// Whether a store value is a tombstone: a deleted last-writer-wins record, or the
  /// record of a strategy key's deleted state.
  static func isTombstone(_ value: PropertyListValue) -> Bool {
    switch RemoteState(storeValue: value) {
    case .record(let record): record.content.value == nil
    case .replica(let record): record.state.isDeleted
    default: false
    }
  }
}

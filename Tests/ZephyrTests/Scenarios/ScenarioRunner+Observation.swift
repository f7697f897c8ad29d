import Foundation
import ZephyrTesting

@testable import Zephyr

extension ScenarioRunner {
  // MARK: Observation

  /// Reads the device's local values; every value that changed names the write the
  /// device now holds (or, for a collection merged by a strategy, the writes whose
  /// elements or entries it holds), whose clock the device's clock merges.
  func observe(_ name: String) {
    let device = device(name)
    let locals = localValues(of: device)
    let cache = device.syncStore.cachedValues
    settleUnpushed(name, locals: locals, cache: cache)
    for key in scenario.keys where locals[key] != known[name]?[key] {
      if let value = locals[key] {
        if let ids = heldWrites(key, value) {
          for id in ids { history.observe(name, writeID: id) }
          let single = scenario.strategies[key]?.isCollection != true && ids.count == 1
          localWrite[name, default: [:]][key] = single ? ids.first : nil
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
    observeSiblings(name)
    // Tombstones this device pushed carry the delete its local state is.
    for key in scenario.keys where locals[key] == nil {
      guard let tombstone = Self.tombstone(key, in: cache), tombstone.origin == name,
        !history.isNamed(tombstone), let id = localWrite[name]?[key], history.writes[id]?.isDelete == true
      else { continue }
      history.nameTombstone(tombstone, deleteID: id)
    }
  }

  /// Edits an inbound event replaced before they were pushed overwrite nothing: an
  /// inbound store event prefers the remote value (the mismatch policy), and until an edit is
  /// pushed no other device can have seen it. A write made after the device saw a later
  /// write of another key is still such an edit while it is unpushed (in the Linux-plain
  /// world, until a sync or a notification announces it), so these are counted apart
  /// (``ScenarioOutcome/overwrittenBeforePush``), as zephyr-bench counts them.
  private func settleUnpushed(
    _ name: String, locals: [String: PropertyListValue], cache: [String: PropertyListValue]
  ) {
    settlePushed(name, cache: cache)
    for (key, edit) in (unpushed[name] ?? [:]).sorted(by: { $0.key < $1.key }) {
      guard let latest = edit.ids.last, let write = history.writes[latest] else { continue }
      switch scenario.strategies[key] {
      case let strategy? where strategy.isCollection:
        // A collection's edit is merged, never replaced: its checks look at its parts.
        unpushed[name]?[key] = nil
        continue
      case .max?, .min?:
        // Merged with a number, an edit is kept or outdone: only a delete replaces it.
        guard locals[key] == nil, write.value != nil else { continue }
      default:
        break
      }
      if locals[key] != write.value {
        for id in edit.ids { history.disarm(id) }
        outcome.overwrittenBeforePush += 1
        unpushed[name]?[key] = nil
      }
    }
  }

  /// Forgets the unpushed edits of `name` that its engine has numbered: those its store
  /// now holds as its own records, and those its ledger holds as its own while its store
  /// does not (a crash kept the record from the store; the engine pushes it again under
  /// the same stamp). The edits numbered since the last observation are placed at one
  /// point (``CausalHistory/placeAtPush(_:)``), in key order.
  func settlePushed(_ name: String, cache: [String: PropertyListValue]? = nil) {
    let cache = cache ?? device(name).syncStore.cachedValues
    let origin = device(name).coordinator.deviceID
    let ledger = device(name).coordinator.engine.state.withLock { $0.ledger }
    var placed: [String] = []
    for key in (unpushed[name] ?? [:]).keys.sorted() {
      guard let edit = unpushed[name]?[key], let latest = edit.ids.last, let write = history.writes[latest]
      else { continue }
      if cache[key] != edit.before, case .replica(let record) = RemoteState(storeValue: cache[key]),
        record.stamp.origin == origin
      {
        // A strategy key's push: the edit's parts are under the record's own dot (named
        // after this device's replica id), or its value is the state's.
        let state = record.state
        let own = state.groups.first { dot, _ in
          dot.generation == record.stamp.generation && dot.origin.hasPrefix(origin + ".")
        }
        let value = state.value(strategy: scenario.strategies[key]?.merge ?? .lastWriterWins, key: key)
        if write.value.map({ own?.value.contains($0) ?? false }) ?? false || state.shows(write.value, merged: value) {
          placed.append(latest)
          history.nameStamp(record.stamp, writeID: latest)
          unpushed[name]?[key] = nil
        }
        continue
      }
      if cache[key] != edit.before, case .record(let record) = RemoteState(storeValue: cache[key]),
        record.origin == origin, record.content.value == write.value
      {
        placed.append(latest)
        history.nameStamp(record.stamp, writeID: latest)
        unpushed[name]?[key] = nil
        continue
      }
      // Numbered, but not in the store: the ledger holds the edit as this device's write.
      // (A value only: its id makes it unique, while a delete matches the ledger's record
      // of an earlier delete, which a later edit and removal of the key leave unchanged.)
      if scenario.strategies[key] == nil, write.value != nil, let entry = ledger[key], entry.origin == origin,
        entry.pendingPull == nil, entry.agreed == LedgerEntry.Agreed(write.value)
      {
        placed.append(latest)
        history.nameStamp(entry.stamp, writeID: latest)
        unpushed[name]?[key] = nil
      }
    }
    history.placeAtPush(placed)
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
  func persistentValues(of device: TestDevice) -> [String: PropertyListValue] {
    let domain = device.defaults.persistentDomain(forName: device.suiteName) ?? [:]
    var values: [String: PropertyListValue] = [:]
    for key in scenario.keys {
      if let raw = domain[key], let value = PropertyListValue(bridging: raw) { values[key] = value }
    }
    return values
  }

  /// The writes a local value of `key` holds: the one whose value it is, or for a
  /// collection merged by a strategy those whose elements or entries it holds; `nil` when
  /// it holds something nobody wrote.
  func heldWrites(_ key: String, _ value: PropertyListValue) -> [String]? {
    let ids: [String]?
    if let strategy = scenario.strategies[key] {
      ids = strategy.writeIDs(in: value, numbers: history.numbers[key] ?? [:])
    } else {
      ids = WriteTag.id(in: value).map { [$0] }
    }
    guard let ids, ids.allSatisfy({ history.writes[$0]?.key == key }) else { return nil }
    return ids
  }

  /// A `.max`, `.min` or `.custom` key's state holds every sibling a merge kept, shown or
  /// not: the device has seen each of those writes, and a later write of its replaces
  /// them (read from the device's ledger, the state the engine merges from).
  private func observeSiblings(_ name: String) {
    for (key, strategy) in scenario.strategies.sorted(by: { $0.key < $1.key }) where !strategy.isCollection {
      let state = device(name).coordinator.engine.state.withLock { $0.ledger[key]?.state }
      guard let state, state.kind.holdsSiblings else { continue }
      for dot in state.dots {
        // A write's dot is named after its device's replica id, `<device id>.<incarnation>`,
        // at the generation of the record that carried it.
        guard let end = dot.origin.lastIndex(of: ".") else { continue }
        let stamp = Stamp(generation: dot.generation, origin: String(dot.origin[..<end]))
        if let id = history.writeID(of: stamp, key: key) { history.observe(name, writeID: id) }
      }
    }
  }
}

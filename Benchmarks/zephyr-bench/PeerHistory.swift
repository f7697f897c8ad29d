import Foundation
import Zephyr

/// A vector clock: per device, how many of its writes are known.
struct VectorClock: Hashable, Sendable {
  var counters: [String: Int] = [:]

  mutating func tick(_ device: String) {
    counters[device, default: 0] += 1
  }

  mutating func merge(_ other: VectorClock) {
    for (device, count) in other.counters where count > counters[device, default: 0] { counters[device] = count }
  }

  /// Whether `self` happened strictly before `other`.
  func precedes(_ other: VectorClock) -> Bool {
    self != other && counters.allSatisfy { device, count in count <= other.counters[device, default: 0] }
  }
}

/// One edit or delete the workload made.
struct PeerWrite: Sendable {
  var id: String
  var key: String
  /// `nil` for a delete.
  var value: PropertyListValue?
  var writer: String
  /// The writer's clock, across all keys, right after the write.
  var clock: VectorClock
  /// The server has held it (a value: its id in the key's store value; a delete: the key
  /// held no value on the server after its writer uploaded while still holding the delete).
  var pushed = false
  /// Its writer's local value was replaced by something other than its own next edit
  /// before the write reached the server.
  var overwrittenBeforePush = false

  var isDelete: Bool { value == nil }
}

/// What the driver knows about causality, across keys.
///
/// Each device has one vector clock. An edit ticks it; a device whose local value of any
/// key becomes another device's write merges that write's clock. So a write follows every
/// write its device had seen, of any key, directly or through other devices: the order an
/// app's user sees. A pulled delete carries no id and merges nothing, which can only hide
/// a lost write, never invent one.
struct PeerHistory {
  private(set) var writes: [String: PeerWrite] = [:]
  private(set) var writesByKey: [String: [String]] = [:]
  private var clocks: [String: VectorClock] = [:]
  /// Per device, per key: the write whose state the device's local value is, if known.
  private var holding: [String: [String: String]] = [:]
  /// Per device: its local values as last observed.
  private var known: [String: [String: PropertyListValue]] = [:]

  /// Records an edit (`value`) or a delete (`nil`) that `device` just made.
  mutating func record(id: String, key: String, value: PropertyListValue?, by device: String) {
    clocks[device, default: VectorClock()].tick(device)
    let write = PeerWrite(
      id: id, key: key, value: value, writer: device, clock: clocks[device, default: VectorClock()])
    writes[id] = write
    writesByKey[key, default: []].append(id)
    holding[device, default: [:]][key] = id
    known[device, default: [:]][key] = value
  }

  /// Takes in `device`'s local values after a step that was not its own edit.
  mutating func observe(_ device: String, locals: [String: PropertyListValue]) {
    for key in PeerScenario.keys where locals[key] != known[device]?[key] {
      if let previous = holding[device]?[key], var write = writes[previous], write.writer == device, !write.pushed {
        write.overwrittenBeforePush = true
        writes[previous] = write
      }
      if let value = locals[key], let id = PeerValue.writeIDs(in: value).first, let write = writes[id],
        write.key == key
      {
        holding[device, default: [:]][key] = id
        clocks[device, default: VectorClock()].merge(write.clock)
      } else {
        holding[device]?[key] = nil
      }
    }
    known[device] = locals
  }

  /// Marks as pushed what the server now holds, after `uploaders` uploaded.
  mutating func markPushed(server: [String: PropertyListValue], uploaders: [String]) {
    for (storeKey, value) in server {
      for id in PeerValue.writeIDs(in: value) where writes[id]?.key == storeKey {
        writes[id]?.pushed = true
      }
    }
    for device in uploaders {
      for key in PeerScenario.keys {
        guard let id = holding[device]?[key], let write = writes[id], write.isDelete, write.writer == device else {
          continue
        }
        if server[key].map({ PeerValue.writeIDs(in: $0).isEmpty }) ?? true { writes[id]?.pushed = true }
      }
    }
  }

  /// The writes the workload counts as replaced before they were pushed, sorted.
  var overwrittenBeforePush: [String] {
    writes.values.filter(\.overwrittenBeforePush).map(\.id).sorted()
  }

  /// Whether a device's final value of `key` is a lost write: a later write that was
  /// pushed (and not overwritten before its push) causally follows it. An absent key is
  /// lost when every delete of it (or, without deletes, the absence itself) is followed by
  /// such a write.
  func isLost(key: String, final: PropertyListValue?) -> Bool {
    let all = (writesByKey[key] ?? []).compactMap { writes[$0] }
    let superseding = all.filter { $0.pushed && !$0.overwrittenBeforePush }
    func superseded(_ write: PeerWrite) -> Bool {
      superseding.contains { $0.id != write.id && write.clock.precedes($0.clock) }
    }
    if let final {
      guard let id = PeerValue.writeIDs(in: final).first, let write = writes[id] else { return false }
      return superseded(write)
    }
    let deletes = all.filter(\.isDelete)
    if deletes.isEmpty { return superseding.contains { !$0.isDelete } }
    return deletes.allSatisfy(superseded)
  }

  /// Whether a value for `key` at the end brings back a delete that causally follows every
  /// other write of the key (and that its device did not lose before pushing it).
  func isResurrected(key: String, final: PropertyListValue?) -> Bool {
    guard final != nil else { return false }
    let all = (writesByKey[key] ?? []).compactMap { writes[$0] }
    return all.contains { delete in
      delete.isDelete && !delete.overwrittenBeforePush
        && all.allSatisfy { $0.id == delete.id || $0.clock.precedes(delete.clock) }
    }
  }
}

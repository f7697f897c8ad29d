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

/// What replaced a write on its own device before the server held it, by the kind of
/// step in which its device's local value changed.
enum PeerReplacement: String, Sendable {
  /// A store event the device was handed: a download's, a late or a duplicate one, or
  /// one in the final rounds. The issue's "overwritten before push": an inbound event
  /// prefers remote.
  case inboundEvent = "inbound event"
  /// Its own device's design code, in a step where no event was handed to it: the push
  /// that reacted to the app's write (within the write's own step) or a sync of that
  /// device (a `sync` step or a final round). The design took the value its store copy
  /// held instead. For this engine that is the merge rule "no history, present | another
  /// value in a Zephyr record | pull: cloud history beats a never-synced device" (the
  /// Merge Semantics article, Sources/Zephyr/Zephyr.docc/MergeSemantics.md).
  case ownPushOrSync = "own push or sync"
  /// A relaunch: the new instance's launch (for most designs, a sync).
  case relaunch
}

/// What became of one write, each write counted once (``PeerHistory/fate(of:)``).
enum PeerFate: Sendable {
  /// The server held it before anything replaced it on its device.
  case pushed
  /// Its device's next write of the key came first; it never reached the server.
  case supersededByOwnEdit
  /// Replaced on its device before the server held it.
  case replaced(PeerReplacement, causallyLater: Bool)
  /// Still unpushed at the end: the design never sent it.
  case neverPushed
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
  /// What replaced its writer's local value before the write reached the server, when
  /// something other than the writer's own next write of the key did.
  var replaced: PeerReplacement?
  /// The replacing value was another write that causally precedes this one: the device
  /// went back to a state its user had already seen superseded. A replacement by
  /// absence names no write and is never counted so.
  var replacedByEarlier = false
  /// Its writer's next write of the key came before any push or replacement.
  var supersededByOwnEdit = false

  var isDelete: Bool { value == nil }
  /// Whether it can supersede other writes: it reached the server as its device's state.
  var superseding: Bool { pushed && replaced == nil }
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
    if let previous = holding[device]?[key], let write = writes[previous], write.writer == device, !write.pushed,
      write.replaced == nil
    {
      writes[previous]?.supersededByOwnEdit = true
    }
    clocks[device, default: VectorClock()].tick(device)
    let write = PeerWrite(
      id: id, key: key, value: value, writer: device, clock: clocks[device, default: VectorClock()])
    writes[id] = write
    writesByKey[key, default: []].append(id)
    holding[device, default: [:]][key] = id
    known[device, default: [:]][key] = value
  }

  /// Takes in `device`'s local values after a step; `cause` is the kind of step, which
  /// tells what replaced a write of the device that the server did not hold yet.
  mutating func observe(_ device: String, locals: [String: PropertyListValue], cause: PeerReplacement) {
    for key in PeerScenario.keys where locals[key] != known[device]?[key] {
      let incoming = locals[key].flatMap { PeerValue.writeIDs(in: $0).first }.flatMap { writes[$0] }
      if let previous = holding[device]?[key], var write = writes[previous], write.writer == device, !write.pushed,
        write.replaced == nil
      {
        write.replaced = cause
        write.replacedByEarlier = incoming.map { $0.key == key && $0.clock.precedes(write.clock) } ?? false
        writes[previous] = write
      }
      if let write = incoming, write.key == key {
        holding[device, default: [:]][key] = write.id
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

  /// What became of `write`: the first of replaced, pushed, superseded by its device's
  /// next write, or never pushed.
  func fate(of write: PeerWrite) -> PeerFate {
    if let cause = write.replaced { return .replaced(cause, causallyLater: write.replacedByEarlier) }
    if write.pushed { return .pushed }
    return write.supersededByOwnEdit ? .supersededByOwnEdit : .neverPushed
  }

  /// The writes replaced before their push, with what replaced them, sorted by id.
  var replacedBeforePush: [String] {
    writes.values.compactMap { write in
      write.replaced.map { cause in
        "\(write.id) (\(cause.rawValue)\(write.replacedByEarlier ? ", causally later" : ""))"
      }
    }.sorted()
  }

  /// Whether a device's final value of `key` is a lost write: a later write that was
  /// pushed (and not replaced on its device before its push) causally follows it. An absent key is
  /// lost when every delete of it (or, without deletes, the absence itself) is followed by
  /// such a write.
  func isLost(key: String, final: PropertyListValue?) -> Bool {
    let all = (writesByKey[key] ?? []).compactMap { writes[$0] }
    let superseding = all.filter(\.superseding)
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
      delete.isDelete && delete.replaced == nil
        && all.allSatisfy { $0.id == delete.id || $0.clock.precedes(delete.clock) }
    }
  }
}

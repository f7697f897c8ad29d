import Foundation

@testable import Zephyr

/// A vector clock: per writer, how many of its writes are known.
struct VectorClock: Hashable, Sendable, CustomStringConvertible {
  var counters: [String: Int] = [:]

  mutating func tick(_ node: String) {
    counters[node, default: 0] += 1
  }

  mutating func merge(_ other: VectorClock) {
    for (node, count) in other.counters where count > counters[node, default: 0] { counters[node] = count }
  }

  /// Whether `self` happened strictly before `other`.
  func precedes(_ other: VectorClock) -> Bool {
    self != other && counters.allSatisfy { node, count in count <= other.counters[node, default: 0] }
  }

  var description: String {
    "{" + counters.keys.sorted().map { "\($0):\(counters[$0] ?? 0)" }.joined(separator: " ") + "}"
  }
}

/// One write the scenario driver made: a value (carrying `id`) or a delete.
struct TrackedWrite: Sendable, CustomStringConvertible {
  var id: String
  var key: String
  /// `nil` for a delete.
  var value: PropertyListValue?
  /// The writer's local value just before the write (tracked for strategy keys, whose
  /// checks look at what a write added and removed).
  var prior: PropertyListValue?
  var writer: String
  var clock: VectorClock
  /// The writer's knowledge of this key alone when it wrote: what a merge strategy, which
  /// decides between changes of one key neither side had seen, orders by.
  var keyClock = VectorClock()
  /// Position in execution order, to tell writes made after the last account switch.
  var order: Int
  var account: String
  /// Whether the write may overwrite an earlier one. A foreign removal never does
  /// (absence is not a delete: a device holding the value pushes it again), and a foreign
  /// write does only once a device has taken it: until then it exists on the server
  /// alone, where any write in flight may overwrite it for good, as it would on iCloud
  /// (and one made while a write of its key was in flight never does: that write lands
  /// over it whoever took it, see ``CausalHistory/contest(_:)``).
  /// A write made in another account never does (checks are in the default account),
  /// nor one its device held, or that no other device had held, when it switched
  /// accounts: the switch drops unsent writes and resets the ledger that alone defends
  /// such a write, and the new account's values win conflicts (after an account change
  /// remote wins, see MergeSemantics.md). Nor does an edit made while the device
  /// had no history for the key, which any record beats ("cloud history beats a
  /// never-synced device").
  var overwrites: Bool

  var isDelete: Bool { value == nil }
  var isForeign: Bool { writer == CausalHistory.foreignWriter }

  var description: String {
    "\(isDelete ? "delete" : "write") \(id) of \(key) by \(writer) in \(account) at step \(order) \(clock)"
  }
}

/// An invariant a scenario broke.
struct Violation: Sendable, Equatable, CustomStringConvertible {
  enum Kind: String, Sendable {
    case convergence, legitimacy, resurrection, quiet, stability, order
    case inventedValue = "invented value"
  }

  var kind: Kind
  /// The key it concerns, when it concerns one.
  var key: String?
  var message: String

  init(kind: Kind, key: String? = nil, message: String) {
    self.kind = kind
    self.key = key
    self.message = message
  }

  var description: String { "\(kind.rawValue): \(message)" }
}

/// What the driver knows about causality: every write with its vector clock, and each
/// device's clock, which merges a write's clock when the device observes that write (its
/// local value of the write's key becomes that write's state).
///
/// Causality is tracked across keys, one clock per device: a write of `theme` follows
/// every write the device had seen before it, of any key. So a write made after seeing
/// another device's write of `font` follows that device's earlier write of `theme`, and
/// must win over it. Zephyr keeps this order with one Lamport clock per device
/// (MergeSemantics.md, "Stamps order every write"): a device's next write is numbered
/// above every generation it has written or read.
///
/// Values carry their write's id (see ``WriteTag``), so an observed value names its
/// write. A delete carries nothing; a pulled delete is named through the tombstone that
/// brought it, which the driver maps to the delete when the deleting device pushes it.
/// Where a delete cannot be named, nothing is merged: the clocks then under-approximate
/// causality, which can only hide a violation, never invent one.
struct CausalHistory {
  static let foreignWriter = "foreign"
  /// The account whose final state is checked.
  static let checkedAccount = "default"

  private(set) var writes: [String: TrackedWrite] = [:]
  private(set) var writesByKey: [String: [TrackedWrite]] = [:]
  /// Per device, across keys.
  private(set) var clocks: [String: VectorClock] = [:]
  /// Per device and key: what the device saw of that key.
  private var keyClocks: [String: [String: VectorClock]] = [:]
  /// A tombstone's identity (key, generation, origin, date) → the delete it carries.
  private var tombstones: [TombstoneID: String] = [:]

  struct TombstoneID: Hashable {
    var key: String
    var generation: UInt64
    var origin: String
    var date: Date
  }

  /// Records a write by `writer` (a device, or ``foreignWriter``): its clock ticks first.
  /// A foreign removal is recorded as a delete that overwrites nothing, so that it can
  /// explain an absence. The foreign writer keeps one clock per key: it stamps nothing,
  /// so its writes of different keys have no order any device could learn (a device
  /// that took its write of one key has not thereby seen its earlier write of another).
  @discardableResult
  mutating func recordWrite(
    id: String, key: String, value: PropertyListValue?, prior: PropertyListValue? = nil, writer: String, order: Int,
    account: String
  ) -> TrackedWrite {
    let clockOwner = Self.clockOwner(writer, key: key)
    clocks[clockOwner, default: VectorClock()].tick(node(of: clockOwner))
    keyClocks[clockOwner, default: [:]][key, default: VectorClock()].tick(node(of: clockOwner))
    var write = TrackedWrite(
      id: id, key: key, value: value, prior: prior, writer: writer, clock: clocks[clockOwner] ?? VectorClock(),
      order: order, account: account, overwrites: writer != Self.foreignWriter && account == Self.checkedAccount)
    write.keyClock = keyClocks[clockOwner]?[key] ?? VectorClock()
    writes[id] = write
    writesByKey[key, default: []].append(write)
    holders[id, default: []].insert(writer)
    if let value, case .integer = value, numbers[key]?[value] == nil { numbers[key, default: [:]][value] = id }
    return write
  }

  /// Per key, the write each integer value came from (values of `.max` and `.min` keys
  /// are unique to their write; see ``ScenarioStrategy``).
  private(set) var numbers: [String: [PropertyListValue: String]] = [:]

  /// `device`, changing accounts, may upload the value it holds of a collection key
  /// (perhaps a merge no single write made) as its own: a write that overwrites nothing,
  /// adding every element it holds.
  mutating func recordImport(
    of value: PropertyListValue, key: String, by device: String, order: Int, account: String
  ) {
    let id = "\(key)@\(device)\(order)"
    recordWrite(id: id, key: key, value: value, writer: device, order: order, account: account)
    setOverwrites(id, false)
  }

  /// Whose clock a write of `key` by `writer` ticks: the device's, or the foreign
  /// writer's clock of that key.
  private static func clockOwner(_ writer: String, key: String) -> String {
    writer == foreignWriter ? "\(writer)[\(key)]" : writer
  }

  /// How many times each device forgot what it knew (see ``forget(_:)``).
  private var epochs: [String: Int] = [:]

  /// The clock entry a device's writes tick: a new one after each time it forgot, so
  /// that its counter can start again without two writes sharing a clock.
  private func node(of device: String) -> String {
    epochs[device].map { "\(device)'\($0)" } ?? device
  }

  /// `device` changed accounts: its ledger was reset, so the engine knows nothing of
  /// what the device had seen, nor of its own earlier writes. The values it holds stay,
  /// as values with no history; what it writes from now on follows only what it sees
  /// from now on. Returns the writes no device knows of any more.
  @discardableResult
  mutating func forget(_ device: String) -> [String] {
    clocks[device] = VectorClock()
    keyClocks[device] = [:]
    epochs[device, default: 0] += 1
    var forgotten: [String] = []
    for (id, devices) in holders.sorted(by: { $0.key < $1.key }) where devices.contains(device) {
      holders[id]?.remove(device)
      if holders[id]?.isEmpty == true { forgotten.append(id) }
    }
    return forgotten
  }

  /// Per write, the devices whose history holds it: its writer, and those that took it.
  private var holders: [String: Set<String>] = [:]

  /// Per write, the imports of its value: when a device changes accounts, the values it
  /// holds stay, and those the new account lacks are uploaded there: a new write of an
  /// old value, made with no history.
  private(set) var imports: [String: [String]] = [:]

  /// `device`, changing accounts, may upload the value of write `id` it holds as its own.
  /// Such an import overwrites nothing (it happens only where the key is missing), but
  /// the value is legitimate as long as one of its writes is.
  mutating func recordImport(of id: String, by device: String, order: Int, account: String) {
    guard let write = writes[id], let value = write.value else { return }
    var copy = recordWrite(
      id: "\(id)@\(device)\(order)", key: write.key, value: value, writer: device, order: order, account: account)
    copy.overwrites = false
    writes[copy.id] = copy
    writesByKey[write.key] = writesByKey[write.key]?.map { $0.id == copy.id ? copy : $0 }
    imports[id, default: []].append(copy.id)
  }

  /// Writes another device has held. A write only its writer has held is defended only
  /// by its writer's ledger (which pushes it again when the store's last-writer-wins
  /// loses it), so an account change, which resets that ledger, may lose it.
  private(set) var seenElsewhere: Set<String> = []

  /// Per foreign write and device that took it, when it first did (a running count).
  private var takenAt: [String: [String: Int]] = [:]
  private var takings = 0

  /// `device` now holds the state of write `id`.
  mutating func observe(_ device: String, writeID id: String) {
    guard let write = writes[id] else { return }
    holders[id, default: []].insert(device)
    if write.isForeign, takenAt[id]?[device] == nil {
      takings += 1
      takenAt[id, default: [:]][device] = takings
    }
    if device != write.writer { seenElsewhere.insert(id) }
    let owner = Self.clockOwner(device, key: write.key)
    clocks[owner, default: VectorClock()].merge(write.clock)
    keyClocks[owner, default: [:]][write.key, default: VectorClock()].merge(write.keyClock)
    if write.isForeign, !write.isDelete, !write.overwrites, !contested.contains(id) { setOverwrites(id, true) }
  }

  /// Foreign writes made while a device had a write of their key in flight: that write
  /// overwrites them on the server when it lands, so they never overwrite anything.
  private(set) var contested: Set<String> = []

  /// Foreign write `id` was made while a write of its key was in flight.
  mutating func contest(_ id: String) {
    contested.insert(id)
  }

  /// The tombstone lifetime passed: a device's sync may collect a deletion's tombstone
  /// from the store, and a device that never saw the deletion, still holding a value of
  /// its key, then uploads that value again (the documented limit of collected
  /// deletions). So each delete that a device in `holding` (in the delete's account) has
  /// not seen may be undone. Deletes every such device saw keep their guarantee.
  mutating func tombstonesExpired(holding: [(device: String, key: String, account: String)]) {
    for (device, key, account) in holding {
      let seen = keyClocks[Self.clockOwner(device, key: key)]?[key] ?? VectorClock()
      for delete in writesByKey[key] ?? []
      where delete.isDelete && !delete.isForeign && delete.overwrites && delete.account == account
        && delete.keyClock != seen && !delete.keyClock.precedes(seen)
      {
        disarm(delete.id)
      }
    }
  }

  /// A write that may not overwrite after all (see ``TrackedWrite/overwrites``).
  mutating func disarm(_ id: String) {
    setOverwrites(id, false)
  }

  private mutating func setOverwrites(_ id: String, _ overwrites: Bool) {
    guard var write = writes[id], write.overwrites != overwrites else { return }
    write.overwrites = overwrites
    writes[id] = write
    writesByKey[write.key] = writesByKey[write.key]?.map { $0.id == id ? write : $0 }
  }

  /// Places writes `ids`, all by one device and numbered by one batch of its engine (one
  /// sync or push), at one point in the order of writes, as concurrent with each other.
  /// An edit nothing announced (in the Linux-plain world; or one a crash kept from its
  /// push) takes its place when its device's engine numbers it: the engine cannot know
  /// when it was made, and numbers it above everything its device has seen by then.
  /// Each write follows what its writer saw until then, and its writer's clock ticks
  /// once for the batch, as for writes made then. (Placing a batch's writes one after
  /// another would order them by whatever order they were placed in: the hash order of
  /// the runner's dictionaries, which changes with each process.)
  mutating func placeAtPush(_ ids: [String]) {
    let batch = ids.compactMap { writes[$0] }
    guard let writer = batch.first?.writer, clocks[writer] != nil, batch.allSatisfy({ $0.writer == writer }),
      batch.contains(where: { $0.clock != clocks[writer] })
    else { return }
    let node = node(of: writer)
    clocks[writer]?.tick(node)
    for key in Set(batch.map(\.key)).sorted() {
      keyClocks[writer, default: [:]][key, default: VectorClock()].tick(node)
    }
    for var write in batch {
      write.clock.merge(clocks[writer] ?? VectorClock())
      write.keyClock.merge(keyClocks[writer]?[write.key] ?? VectorClock())
      writes[write.id] = write
      writesByKey[write.key] = writesByKey[write.key]?.map { $0.id == write.id ? write : $0 }
    }
  }

  mutating func nameStamp(_ stamp: Stamp, writeID id: String) {
    guard let write = writes[id] else { return }
    if stamps[write.key]?[stamp] == nil { stamps[write.key, default: [:]][stamp] = id }
  }

  /// The write a record stamp of `key` carries, when known.
  func writeID(of stamp: Stamp, key: String) -> String? {
    stamps[key]?[stamp]
  }

  private var stamps: [String: [Stamp: String]] = [:]

  mutating func nameTombstone(_ tombstone: TombstoneID, deleteID: String) {
    if tombstones[tombstone] == nil { tombstones[tombstone] = deleteID }
  }

  func deleteID(of tombstone: TombstoneID) -> String? {
    tombstones[tombstone]
  }

  func isNamed(_ tombstone: TombstoneID) -> Bool {
    tombstones[tombstone] != nil
  }

  // MARK: Invariants

  /// Checks a converged final state of `key` (`nil`: deleted or absent).
  ///
  /// - legitimacy: the final state is a write (or a delete) that no other write of the key
  ///   causally follows; an absent key with writes needs a delete nobody overwrote;
  /// - no resurrection: a delete that causally follows every other write of its key
  ///   leaves the key deleted.
  ///
  /// Only writes that may overwrite (see ``TrackedWrite/overwrites``) count as overwriting.
  func violations(key: String, final: PropertyListValue?, perKey: Bool = false) -> [Violation] {
    let all = writesByKey[key] ?? []
    let eligible = all.filter(\.overwrites)
    func clock(_ write: TrackedWrite) -> VectorClock { perKey ? write.keyClock : write.clock }
    // Foreign values carry no order: one overwrites an earlier one only where a device
    // took the earlier and then the later (devices that each took one, or took them the
    // other way round, have nothing to order them by).
    func orders(_ write: TrackedWrite, _ later: TrackedWrite) -> Bool {
      guard write.isForeign, later.isForeign else { return true }
      let (first, second) = (takenAt[write.id] ?? [:], takenAt[later.id] ?? [:])
      return first.contains { device, at in second[device].map { at < $0 } ?? false }
    }
    func dominator(of write: TrackedWrite) -> TrackedWrite? {
      eligible.first { $0.id != write.id && clock(write).precedes(clock($0)) && orders(write, $0) }
    }
    var found: [Violation] = []
    let resurrected = eligible.first { delete in
      delete.isDelete
        && all.allSatisfy {
          $0.id == delete.id || clock($0).precedes(clock(delete)) || ($0.isForeign && $0.isDelete)
        }
    }
    if let final {
      if let resurrected {
        found.append(
          Violation(
            kind: .resurrection, key: key,
            message: "\(key) holds \(final.logDescription) after \(resurrected), which follows every write of it"))
      }
      guard let id = WriteTag.id(in: final) ?? numbers[key]?[final], let write = writes[id] else {
        found.append(
          Violation(kind: .inventedValue, key: key, message: "\(key) holds \(final.logDescription), which nobody wrote")
        )
        return found
      }
      if write.key != key || write.value != final {
        found.append(
          Violation(
            kind: .inventedValue, key: key,
            message: "\(key) holds \(final.logDescription), but \(write) wrote \(write.value?.logDescription ?? "-")"))
      }
      // The value may have come back under an account change, as a new write.
      let identities = [write] + (imports[id] ?? []).compactMap { writes[$0] }
      if resurrected == nil, identities.allSatisfy({ dominator(of: $0) != nil }), let later = dominator(of: write) {
        found.append(Violation(kind: .legitimacy, key: key, message: "\(key) holds \(write), overwritten by \(later)"))
      }
      return found
    }
    guard !all.isEmpty else { return found }
    let deletes = all.filter(\.isDelete)
    if deletes.isEmpty {
      found.append(Violation(kind: .legitimacy, key: key, message: "\(key) is absent, but nobody deleted it: \(all)"))
    } else if deletes.allSatisfy({ dominator(of: $0) != nil }) {
      let overwritten = deletes.map { "\($0) by \(dominator(of: $0).map(\.id) ?? "?")" }
      found.append(
        Violation(
          kind: .legitimacy, key: key, message: "\(key) is deleted, but every delete was overwritten: \(overwritten)"))
    }
    return found
  }
}

/// How the driver encodes a write's id into the values it writes, in three shapes so
/// that dictionaries, strings and arrays all travel through the engine.
enum WriteTag {
  static func value(id: String, payload: PropertyListValue, shape: Int) -> PropertyListValue {
    switch shape % 3 {
    case 0: .dictionary(["w": .string(id), "p": payload])
    case 1: .string("w:\(id):" + String(payload.logDescription.prefix(20)))
    default: .array([.string("w:\(id)"), payload])
    }
  }

  /// The write id a value carries, if any.
  static func id(in value: PropertyListValue) -> String? {
    switch value {
    case .dictionary(let entries):
      if case .string(let id)? = entries["w"] { return id }
    case .string(let text):
      let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
      if parts.count == 3, parts[0] == "w" { return String(parts[1]) }
    case .array(let items):
      if case .string(let text)? = items.first, text.hasPrefix("w:") { return String(text.dropFirst(2)) }
    default:
      break
    }
    return nil
  }
}

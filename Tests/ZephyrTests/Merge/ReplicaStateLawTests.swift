import Foundation
import Testing

@testable import Zephyr

/// The algebra of strategy keys' states (``ReplicaState``), checked as laws: the join is
/// commutative, associative and idempotent over generated states; and, exhaustively over
/// small scopes, every interleaving of edits and merges on three devices holds what an
/// independent causal specification says it must.
struct ReplicaStateLawTests {
  // MARK: The causal specification

  /// One write, as the specification sees it: who made it, what it says, and every write
  /// its device had seen when it made it.
  private struct Event: Hashable {
    var id: Int
    var device: Int
    /// `.set`: an element added, or removed when `removes`. `.max`: the value (`nil` a
    /// delete). `.dictionary`: the entry set (`nil` value: removed).
    var element: String?
    var value: Int?
    var removes: Bool
    var seen: Set<Int>
    var dot: Stamp
  }

  /// What a device knows: the events it has seen, and its implementation state.
  private struct Replica {
    var seen: Set<Int> = []
    var state: ReplicaState
    var clock: UInt64 = 0
  }

  private enum Operation: CustomStringConvertible {
    case add(Int, String)
    case remove(Int, String)
    case set(Int, Int?)
    /// The device writes its array reversed: a reorder, adding and removing nothing.
    case reorder(Int)
    case merge(Int, from: Int)

    var description: String {
      switch self {
      case .add(let device, let element): "\(device)+\(element)"
      case .remove(let device, let element): "\(device)-\(element)"
      case .set(let device, let value): "\(device)=\(value.map(String.init) ?? "nil")"
      case .reorder(let device): "\(device)~"
      case .merge(let device, let other): "\(device)<\(other)"
      }
    }
  }

  /// The value the specification gives a device that has seen `seen`: for a set, every
  /// element with an add no removal it saw covers; for the extremes, the extreme of the
  /// writes no later write it saw replaced; for a dictionary, per entry, the latest such
  /// that sets a value (a removal gives way to a value written alongside it).
  private static func specified(_ kind: ReplicaKind, seen: Set<Int>, events: [Event]) -> PropertyListValue? {
    let known = events.filter { seen.contains($0.id) }
    switch kind {
    case .set, .union:
      let live = known.filter { add in
        !add.removes
          && !known.contains { $0.removes && $0.element == add.element && $0.seen.contains(add.id) }
      }
      let elements = Set(live.compactMap(\.element))
      return elements.isEmpty ? nil : .array(elements.sorted().map { .string($0) })
    case .max, .min:
      let live = known.filter { write in !known.contains { $0.id != write.id && $0.seen.contains(write.id) } }
      let values = live.compactMap(\.value)
      return (kind == .max ? values.max() : values.min()).map { .integer(Int64($0)) }
    case .dictionary:
      var entries: [String: PropertyListValue] = [:]
      for key in Set(known.compactMap(\.element)) {
        let writes = known.filter { $0.element == key }
        let live = writes.filter { write in !writes.contains { $0.id != write.id && $0.seen.contains(write.id) } }
        // A removal gives way to a value written alongside it, as a delete of the key does.
        if let latest = live.filter({ $0.value != nil }).max(by: { $0.dot < $1.dot }), let value = latest.value {
          entries[key] = .integer(Int64(value))
        }
      }
      return entries.isEmpty ? nil : .dictionary(entries)
    default:
      return nil
    }
  }

  /// An empty collection as none: the specification does not tell a removal of the last
  /// element from a delete.
  private static func emptyAsNil(_ value: PropertyListValue?) -> PropertyListValue? {
    switch value {
    case .array(let items)? where items.isEmpty: nil
    case .dictionary(let entries)? where entries.isEmpty: nil
    default: value
    }
  }

  /// Runs `operations` on three devices; returns the first disagreement with the
  /// specification, or `nil`.
  private static func check(_ kind: ReplicaKind, _ operations: [Operation]) -> String? {
    var replicas = (0..<3).map { _ in Replica(state: ReplicaState(kind: kind)) }
    var events: [Event] = []
    var failures: [String] = []
    /// `device` writes `value` as its next write, and the specification records it.
    func write(_ value: PropertyListValue?, by device: Int, element: String?, number: Int?, removes: Bool) {
      replicas[device].clock += 1
      let dot = Stamp(generation: replicas[device].clock, origin: "d\(device)")
      replicas[device].state = replicas[device].state.edited(to: value, dot: dot)
      if kind.holdsElements, let value, replicas[device].state.value(strategy: .set, key: "k") != value {
        failures.append("\(operations): device \(device) wrote \(value.logDescription), reads otherwise")
      }
      let event = Event(
        id: events.count, device: device, element: element, value: number, removes: removes,
        seen: replicas[device].seen, dot: dot)
      events.append(event)
      replicas[device].seen.insert(event.id)
    }
    for operation in operations {
      switch operation {
      case .merge(let device, let other):
        let catchesUp = replicas[device].seen.isSubset(of: replicas[other].seen)
        replicas[device].seen.formUnion(replicas[other].seen)
        replicas[device].state = replicas[device].state.joined(with: replicas[other].state)
        replicas[device].clock = max(replicas[device].clock, replicas[other].clock)
        // A device that missed only the other's writes reads its value, in its order.
        if catchesUp, kind.holdsElements,
          replicas[device].state.value(strategy: .set, key: "k")
            != replicas[other].state.value(strategy: .set, key: "k")
        {
          failures.append("\(operations): device \(device) took \(other)'s state, reads another order")
        }
      case .reorder(let device):
        let items = replicas[device].state.value(strategy: .set, key: "k")?.arrayItems ?? []
        write(.array(items.reversed()), by: device, element: nil, number: nil, removes: false)
      case .add(let device, let element), .remove(let device, let element):
        var removes = false
        if case .remove = operation { removes = true }
        var after = PropertyListValue.elements(of: replicas[device].state.value(strategy: .set, key: "k")) ?? []
        if removes { after.remove(.string(element)) } else { after.insert(.string(element)) }
        let value: PropertyListValue = .array(after.sorted { $0.logDescription < $1.logDescription })
        write(value, by: device, element: element, number: nil, removes: removes)
      case .set(let device, let number):
        let element: String? = kind == .dictionary ? (number.map { $0 % 2 == 0 ? "even" : "odd" } ?? "odd") : nil
        var value: PropertyListValue? = number.map { .integer(Int64($0)) }
        if kind == .dictionary, let element {
          var entries = replicas[device].state.value(strategy: .dictionary, key: "k")?.dictionaryEntries ?? [:]
          entries[element] = value
          value = .dictionary(entries)
        }
        write(value, by: device, element: element, number: number, removes: false)
      }
      for (index, replica) in replicas.enumerated() {
        let strategy: MergeStrategy =
          switch kind {
          case .set, .packedSet: .set
          case .union: .union
          case .max: .max
          case .min: .min
          default: .dictionary
          }
        let held = replica.state.value(strategy: strategy, key: "k")
        let expected = specified(kind, seen: replica.seen, events: events)
        // (The specification gives a set's elements, not their order: that is checked above.)
        if !replica.state.shows(Self.emptyAsNil(expected), merged: Self.emptyAsNil(held), inOrder: false) {
          return "\(operations) device \(index): holds \(held?.logDescription ?? "nil"), "
            + "specified \(expected?.logDescription ?? "nil")"
        }
      }
    }
    if let failure = failures.first { return failure }
    // Everyone merges everyone: all hold one state.
    var final = replicas.map(\.state)
    for index in final.indices { final[index] = final.reduce(final[index]) { $0.joined(with: $1) } }
    return Set(final).count == 1 ? nil : "\(operations): not converged"
  }

  /// Every sequence of `depth` operations drawn from `moves`.
  private static func exhaust(
    _ kind: ReplicaKind, depth: Int, moves: [Operation], prefix: [Operation] = [], count: inout Int
  ) -> String? {
    if prefix.count == depth {
      count += 1
      return check(kind, prefix)
    }
    for move in moves {
      if let failure = exhaust(kind, depth: depth, moves: moves, prefix: prefix + [move], count: &count) {
        return failure
      }
    }
    return nil
  }

  private static func merges() -> [Operation] {
    (0..<3).flatMap { device in (0..<3).filter { $0 != device }.map { Operation.merge(device, from: $0) } }
  }

  /// How many operations the exhaustive checks interleave: 4 per CI run (54,240
  /// interleavings per strategy), `ZEPHYR_EXHAUSTIVE_DEPTH=N` for more.
  private static let depth =
    ProcessInfo.processInfo.environment["ZEPHYR_EXHAUSTIVE_DEPTH"].flatMap(Int.init).map { max($0, 4) } ?? 4

  /// Every interleaving of up to ``depth`` adds, removes and merges of two elements over three
  /// devices (a removal made after merges stays removed; a concurrent add stays).
  @Test(arguments: [ReplicaKind.set, .union])
  func everySmallSetHistoryHoldsWhatItsCausalHistorySays(kind: ReplicaKind) {
    let moves: [Operation] =
      (0..<3).flatMap { device in
        [Operation.add(device, "x"), .add(device, "y"), .remove(device, "x")]
      } + Self.merges()
    Self.checkEveryInterleaving(kind, of: moves)
  }

  /// Every interleaving of up to ``depth`` adds, reorders (the array reversed) and merges
  /// of two elements over three devices: a device reads the order it wrote, a device that
  /// takes another's state reads its order, and devices that saw the same writes read one
  /// order.
  @Test(arguments: [ReplicaKind.set, .union])
  func everySmallReorderHistoryKeepsTheWritersOrder(kind: ReplicaKind) {
    let moves: [Operation] =
      (0..<3).flatMap { device in [Operation.add(device, "x"), .add(device, "y"), .reorder(device)] } + Self.merges()
    Self.checkEveryInterleaving(kind, of: moves)
  }

  /// Every interleaving of up to ``depth`` writes (1, 2, a delete) and merges over three
  /// devices, for `.max`, `.min` and `.dictionary`: a value lowered after the merge stays
  /// lowered; concurrent writes keep the extreme, or per entry the latest.
  @Test(arguments: [ReplicaKind.max, .min, .dictionary])
  func everySmallRegisterHistoryHoldsWhatItsCausalHistorySays(kind: ReplicaKind) {
    let moves: [Operation] =
      (0..<3).flatMap { device in [Operation.set(device, 1), .set(device, 2), .set(device, nil)] } + Self.merges()
    Self.checkEveryInterleaving(kind, of: moves)
  }

  /// Checks every sequence of 1 to ``depth`` of `moves`, and reports how many.
  private static func checkEveryInterleaving(_ kind: ReplicaKind, of moves: [Operation]) {
    var count = 0
    for depth in 1...depth {
      if let failure = exhaust(kind, depth: depth, moves: moves, count: &count) {
        Issue.record("\(failure)")
        return
      }
    }
    #expect(count >= 54_240)
    print("ReplicaStateLawTests: \(count) .\(kind.rawValue) interleavings checked")
  }

  // MARK: Laws over generated states

  /// States reached by random edits and merges on four devices.
  private static func generatedStates(_ kind: ReplicaKind, seed: UInt64) -> [ReplicaState] {
    var random = SeededGenerator(seed: seed)
    var replicas = (0..<4).map { _ in ReplicaState(kind: kind) }
    var clocks = [UInt64](repeating: 0, count: 4)
    var reached: [ReplicaState] = []
    for _ in 0..<40 {
      let device = Int.random(in: 0..<4, using: &random)
      if Bool.random(using: &random) {
        let other = Int.random(in: 0..<4, using: &random)
        replicas[device] = replicas[device].joined(with: replicas[other])
        clocks[device] = max(clocks[device], clocks[other])
      } else {
        clocks[device] += 1
        let dot = Stamp(generation: clocks[device], origin: "d\(device)")
        replicas[device] = replicas[device].edited(to: randomValue(kind, using: &random), dot: dot)
      }
      reached.append(replicas[device])
    }
    return reached
  }

  private static func randomValue(_ kind: ReplicaKind, using random: inout SeededGenerator) -> PropertyListValue? {
    let pool = ["a", "b", "c", "d"]
    switch kind {
    case .set, .union:
      if Int.random(in: 0..<8, using: &random) == 0 { return nil }
      // (In any order: a write that reorders sets the state's order.)
      return .array(pool.filter { _ in Bool.random(using: &random) }.shuffled(using: &random).map { .string($0) })
    case .packedSet:
      if Int.random(in: 0..<8, using: &random) == 0 { return nil }
      return .data(PackedIntegers.encode((0..<6).filter { _ in Bool.random(using: &random) }.map { UInt64($0) }))
    case .dictionary:
      if Int.random(in: 0..<8, using: &random) == 0 { return nil }
      var entries: [String: PropertyListValue] = [:]
      for key in pool where Bool.random(using: &random) {
        entries[key] = .integer(Int64.random(in: 0..<3, using: &random))
      }
      return .dictionary(entries)
    case .max, .min, .custom:
      return Int.random(in: 0..<5, using: &random) == 0 ? nil : .integer(Int64.random(in: 0..<10, using: &random))
    }
  }

  @Test(arguments: ReplicaKind.allCases)
  func theJoinIsCommutativeAssociativeAndIdempotent(kind: ReplicaKind) {
    var checked = 0
    for seed in UInt64(1)...20 {
      let states = Self.generatedStates(kind, seed: seed)
      for (index, a) in states.enumerated() {
        let b = states[(index * 7 + 3) % states.count]
        let c = states[(index * 13 + 5) % states.count]
        #expect(a.joined(with: b) == b.joined(with: a), "commutative")
        #expect(a.joined(with: b).joined(with: c) == a.joined(with: b.joined(with: c)), "associative")
        #expect(a.joined(with: a) == a, "idempotent")
        #expect(a.joined(with: b).includes(a), "a join includes both sides")
        #expect(a.joined(with: ReplicaState(kind: kind)) == a, "the empty state is the identity")
        checked += 1
      }
    }
    #expect(checked == 800)
  }

  /// A state read from fields, or encoded once, keeps its fields; any state derived from
  /// it (joined, edited, trimmed) encodes anew: the fields a state hands the ledger and
  /// the store always decode to that state.
  @Test(arguments: ReplicaKind.allCases)
  func keptFieldsNeverOutliveAChange(kind: ReplicaKind) throws {
    func decoded(_ state: ReplicaState) throws -> ReplicaState { try ReplicaState.decode(state.encodedFields).get() }
    for seed in UInt64(1)...10 {
      let states = Self.generatedStates(kind, seed: seed)
      for (index, state) in states.enumerated() {
        let other = states[(index * 7 + 3) % states.count]
        let read = try decoded(state)
        let kept = state.keepingEncoding()
        #expect(read == state && kept == state)
        #expect(read.hashValue == state.hashValue, "kept fields are not part of the state's identity")
        let value = state.value(strategy: .lastWriterWins, key: "k")
        #expect(read.value(strategy: .lastWriterWins, key: "k") == value, "a packed set's value from its kept ids")
        #expect(kept.value(strategy: .lastWriterWins, key: "k") == value)
        let derived = [
          read.joined(with: other), other.joined(with: kept),
          kept.edited(to: nil, dot: Stamp(generation: 99, origin: "z")),
          read.edited(to: Self.sample(kind), dot: Stamp(generation: 98, origin: "y")), read.trimmed(toCapacity: 1),
        ]
        for state in derived {
          #expect(state.encodedFields == state.computedFields)
          #expect(try decoded(state) == state)
        }
      }
    }
  }

  /// A join depends on the values alone: a state joined with itself and with a decoded
  /// copy of itself agree, NaN included (which equals nothing, itself neither).
  @Test func aJoinDependsOnValuesNotOnSharedStorage() throws {
    let dot = Stamp(generation: 3, origin: "a")
    for part in [PropertyListValue.double(.nan), .integer(1)] {
      let state = ReplicaState(kind: .max, groups: [dot: [part]], context: VersionVector(dot: dot))
      let copy = try ReplicaState.decode(state.computedFields).get()
      #expect(state.joined(with: state).partCount == state.joined(with: copy).partCount, "\(part)")
    }
  }

  private static func sample(_ kind: ReplicaKind) -> PropertyListValue? {
    var random = SeededGenerator(seed: 3)
    return randomValue(kind, using: &random) ?? randomValue(kind, using: &random)
  }

  /// States of devices that trim to `capacity` after every edit and merge, as
  /// `.set(capacity:)` does; the untrimmed states they trimmed too.
  private static func cappedRun(
    _ kind: ReplicaKind, capacity: Int, seed: UInt64
  ) -> (replicas: [ReplicaState], untrimmed: [ReplicaState]) {
    var random = SeededGenerator(seed: seed)
    var replicas = (0..<4).map { _ in ReplicaState(kind: kind) }
    var clocks = [UInt64](repeating: 0, count: 4)
    var untrimmed: [ReplicaState] = []
    for _ in 0..<40 {
      let device = Int.random(in: 0..<4, using: &random)
      let next: ReplicaState
      if Bool.random(using: &random) {
        let other = Int.random(in: 0..<4, using: &random)
        next = replicas[device].joined(with: replicas[other])
        clocks[device] = max(clocks[device], clocks[other], next.context.maximum)
      } else {
        clocks[device] += 1
        let dot = Stamp(generation: clocks[device], origin: "d\(device)")
        next = replicas[device].edited(to: randomValue(kind, using: &random), dot: dot)
      }
      untrimmed.append(next)
      replicas[device] = next.trimmed(toCapacity: capacity)
    }
    return (replicas, untrimmed)
  }

  /// A trim is a removal by a device that saw what it removed: idempotent, absorbed by
  /// the join (the untrimmed state cannot bring a part back), never over capacity, and it
  /// keeps the newest writes: no kept element's newest write is older than a trimmed one.
  @Test(arguments: [ReplicaKind.set, .packedSet])
  func aTrimKeepsTheNewestAndSticks(kind: ReplicaKind) {
    var checked = 0
    for seed in UInt64(1)...30 {
      for state in Self.cappedRun(kind, capacity: 2, seed: seed).untrimmed {
        let trimmed = state.trimmed(toCapacity: 2)
        #expect(trimmed.trimmed(toCapacity: 2) == trimmed, "idempotent")
        #expect(state.joined(with: trimmed) == trimmed, "a trimmed part does not come back")
        var newest: [PropertyListValue: Stamp] = [:]
        for (dot, part) in trimmed.parts { newest[part] = max(newest[part] ?? dot, dot) }
        #expect(newest.count <= 2, "over capacity")
        let trimmedAway = state.parts.filter { newest[$0.part] == nil }
        if let oldestKept = newest.values.min(), let newestTrimmed = trimmedAway.map(\.dot).max() {
          #expect(oldestKept >= newestTrimmed, "a newer write was trimmed before an older one")
        }
        checked += 1
      }
    }
    #expect(checked == 1_200)
  }

  /// Devices that trim converge: once every device has merged every other's state, in
  /// any order, they hold one state, within capacity, that further merges leave alone.
  /// (Which state depends on the order: a trim made before a removal arrived stands, as
  /// any removal does; the outcome is not required to be the same for every order.)
  @Test(arguments: [ReplicaKind.set, .packedSet])
  func devicesThatTrimConvergeWhateverTheOrder(kind: ReplicaKind) {
    for seed in UInt64(1)...30 {
      let replicas = Self.cappedRun(kind, capacity: 2, seed: seed).replicas
      func exchange(_ order: [Int]) -> [ReplicaState] {
        var states = replicas
        for _ in 0..<2 {
          for device in order {
            for other in order where other != device {
              states[device] = states[device].joined(with: states[other]).trimmed(toCapacity: 2)
            }
          }
        }
        return states
      }
      for order in [[0, 1, 2, 3], [3, 1, 0, 2], [2, 3, 1, 0]] {
        let states = exchange(order)
        #expect(Set(states).count == 1, "seed \(seed): devices disagree")
        #expect(states[0].trimmed(toCapacity: 2) == states[0], "seed \(seed): over capacity")
        #expect(states[0].joined(with: states[0]).trimmed(toCapacity: 2) == states[0], "seed \(seed): not stable")
        for replica in replicas {
          #expect(states[0].joined(with: replica).trimmed(toCapacity: 2) == states[0], "a trimmed part came back")
        }
      }
    }
  }

  /// A device with no history of a key has observed no removal: its first write, joined
  /// with any state, keeps every part of that state and adds its own.
  @Test(arguments: [ReplicaKind.set, .union, .dictionary])
  func aFirstWriteWithoutHistoryOnlyAdds(kind: ReplicaKind) {
    for seed in UInt64(1)...20 {
      var random = SeededGenerator(seed: seed)
      for state in Self.generatedStates(kind, seed: seed) {
        let first = ReplicaState(kind: kind).edited(
          to: Self.randomValue(kind, using: &random), dot: Stamp(generation: 1, origin: "new"))
        let joined = state.joined(with: first)
        for (dot, parts) in state.groups { #expect(joined.groups[dot] == parts) }
      }
    }
  }

  /// States read back from a record are the states written, every kind.
  @Test(arguments: ReplicaKind.allCases)
  func statesRoundTripThroughTheirRecord(kind: ReplicaKind) {
    for state in Self.generatedStates(kind, seed: 7) where !state.context.isEmpty {
      let record = ReplicaRecord(stamp: Stamp(generation: 99, origin: "w"), state: state)
      guard case .replica(let read) = RemoteState(storeValue: record.encoded) else {
        Issue.record("not read back: \(record.encoded.logDescription)")
        return
      }
      #expect(read == record)
    }
  }
}

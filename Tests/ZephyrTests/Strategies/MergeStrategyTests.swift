import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 11, part 2: merge strategies, pure and across devices.
struct MergeStrategyTests {
  private func resolve(_ strategy: MergeStrategy, _ local: PropertyListValue?, _ remote: PropertyListValue?)
    -> ConflictResolution
  {
    strategy.resolve(Conflict(key: "k", local: local, remote: remote))
  }

  private func stamp(_ origin: String, _ generation: UInt64) -> Stamp { Stamp(generation: generation, origin: origin) }

  /// The state `origin`'s write at `generation` makes of `base` by setting `value`.
  private func write(
    _ value: PropertyListValue?, by origin: String, at generation: UInt64, over base: ReplicaState
  ) -> ReplicaState {
    base.edited(to: value, dot: stamp(origin, generation))
  }

  private func value(_ state: ReplicaState, _ strategy: MergeStrategy) -> PropertyListValue? {
    state.value(strategy: strategy, key: "k")
  }

  // MARK: Pure

  @Test func maxAndMinCompareNumbersDatesAndStrings() {
    #expect(resolve(.max, .integer(3), .integer(7)) == .keepRemote)
    #expect(resolve(.max, .double(9.5), .integer(7)) == .keepLocal)
    #expect(resolve(.min, .integer(3), .integer(7)) == .keepLocal)
    #expect(resolve(.max, .date(Date(timeIntervalSince1970: 5)), .date(Date(timeIntervalSince1970: 4))) == .keepLocal)
    #expect(resolve(.min, .string("b"), .string("a")) == .keepRemote)
    // Not comparable, or a delete: the later write decides.
    #expect(resolve(.max, .string("3"), .integer(7)) == .usePolicy)
    #expect(resolve(.max, nil, .integer(7)) == .usePolicy)
  }

  @Test func aTieIsBrokenTheSameWayOnEveryDevice() {
    let onA = resolve(.max, .integer(3), .double(3))
    let onB = resolve(.max, .double(3), .integer(3))
    #expect(onA != onB, "each device keeps the same value, so one keeps local and the other remote")
    #expect(Set([onA, onB].map { "\($0)" }) == ["keepLocal", "keepRemote"])
  }

  /// Concurrent siblings resolve alike on both sides, and a sibling the other side saw
  /// and replaced is gone.
  @Test func maxMergesSiblings() {
    let c = write(.integer(1), by: "C", at: 1, over: ReplicaState(kind: .max))
    let a = write(.integer(30), by: "A", at: 2, over: c)
    let b = write(.integer(20), by: "B", at: 2, over: c)
    let ab = a.joined(with: b)
    #expect(ab == b.joined(with: a))
    #expect(value(ab, .max) == .integer(30))
    // B lowers its own score after seeing only its own: A's 30 stays, B's 20 is gone.
    let lowered = write(.integer(5), by: "B", at: 3, over: b)
    let merged = ab.joined(with: lowered)
    #expect(value(merged, .max) == .integer(30))
    #expect(merged.parts.map(\.part) == [.integer(30), .integer(5)])
    // Lowered after seeing everything: the lower value stands.
    #expect(value(write(.integer(5), by: "A", at: 4, over: merged).joined(with: ab), .max) == .integer(5))
  }

  @Test func unionKeepsEveryElementOnceInTheOrderOfTheirWrites() {
    let a = write(PropertyListValue.strings("a", "b"), by: "A", at: 2, over: ReplicaState(kind: .union))
    let b = write(PropertyListValue.strings("b", "c"), by: "B", at: 3, over: ReplicaState(kind: .union))
    #expect(value(a.joined(with: b), .union) == PropertyListValue.strings("a", "b", "c"))
    #expect(value(b.joined(with: a), .union) == PropertyListValue.strings("a", "b", "c"))
  }

  /// An element one side lacks is removed when that side saw the write that added it,
  /// kept when it did not: adds and removes of both sides survive.
  @Test func setKeepsAddsAndRemovesOfBothSides() {
    let base = write(PropertyListValue.strings("a", "b", "c"), by: "O", at: 1, over: ReplicaState(kind: .set))
    // Both saw O's {a, b, c}; A removed b and added d; B removed c and added e.
    let a = write(PropertyListValue.strings("a", "c", "d"), by: "A", at: 2, over: base)
    let b = write(PropertyListValue.strings("a", "b", "e"), by: "B", at: 2, over: base)
    #expect(
      Set(value(a.joined(with: b), .set)?.arrayItems ?? [])
        == Set(PropertyListValue.strings("a", "d", "e").arrayItems ?? []))
    // Without a shared write every element survives.
    let x = write(PropertyListValue.strings("a"), by: "X", at: 1, over: ReplicaState(kind: .set))
    let y = write(PropertyListValue.strings("b"), by: "Y", at: 1, over: ReplicaState(kind: .set))
    #expect(value(x.joined(with: y), .set) == PropertyListValue.strings("a", "b"))
    // A delete removes what its device saw; a concurrent add stays.
    let cleared = write(nil, by: "A", at: 3, over: base)
    #expect(value(cleared.joined(with: b), .set) == PropertyListValue.strings("e"))
    #expect(value(cleared.joined(with: base), .set) == nil, "a delete, not an empty array")
  }

  /// Per entry: the side that saw the other's write changed it after; concurrent changes
  /// go to the later write; a removal by a side that saw the entry sticks.
  @Test func dictionaryMergesPerEntry() {
    let o = write(
      .dictionary(["x": .integer(1), "y": .integer(1), "z": .integer(1)]), by: "O", at: 1,
      over: ReplicaState(kind: .dictionary))
    let a = write(
      .dictionary(["x": .integer(2), "y": .integer(1), "z": .integer(1), "w": .integer(5)]), by: "A", at: 2, over: o)
    let b = write(.dictionary(["x": .integer(3), "y": .integer(4)]), by: "B", at: 3, over: o)
    let expected: PropertyListValue = .dictionary(["x": .integer(3), "y": .integer(4), "w": .integer(5)])
    #expect(value(a.joined(with: b), .dictionary) == expected)
    #expect(value(b.joined(with: a), .dictionary) == expected)
  }

  @Test func customRunsYourRule() {
    let longest = MergeStrategy.custom { conflict in
      guard case .string(let mine)? = conflict.local, case .string(let theirs)? = conflict.remote else {
        return .usePolicy
      }
      return mine.count >= theirs.count ? .keepLocal : .keepRemote
    }
    #expect(resolve(longest, .string("abc"), .string("a")) == .keepLocal)
    #expect(resolve(longest, .integer(1), .string("a")) == .usePolicy)
  }

  // MARK: Across devices

  private func devices(
    _ strategy: MergeStrategy, key: String, backend: Backend
  ) -> (Harness, TestDevice, TestDevice) {
    let harness = Harness(backend: backend)
    let devices = harness.devices(["A", "B"], merging: key, by: strategy)
    return (harness, devices[0], devices[1])
  }

  /// Both devices add a favorite while neither has seen the other's; whichever upload
  /// the store keeps, both adds survive, and a quiet round writes nothing.
  @Test(arguments: [["A", "B"], ["B", "A"]], Backend.allCases)
  func concurrentAddsToASetBothSurvive(uploadOrder: [String], backend: Backend) {
    let (harness, a, b) = devices(.set, key: "favorites", backend: backend)
    a.set(PropertyListValue.strings("home"), "favorites")
    harness.round()
    #expect(b.value("favorites") == PropertyListValue.strings("home"))

    a.set(PropertyListValue.strings("home", "work"), "favorites")
    b.set(PropertyListValue.strings("home", "gym"), "favorites")
    for name in uploadOrder { harness.driver.upload(from: name) }
    for _ in 0..<3 { harness.round() }
    for device in [a, b] {
      guard case .array(let items)? = device.value("favorites") else {
        Issue.record("\(device.name) holds no array")
        continue
      }
      #expect(Set(items) == [.string("home"), .string("work"), .string("gym")], "\(device.name)")
    }
    #expect(a.value("favorites") == b.value("favorites"))
    let writes = [a, b].map { $0.syncStore.writeCount }
    harness.round()
    #expect([a, b].map { $0.syncStore.writeCount } == writes, "a quiet round writes nothing")
  }

  /// A device that had seen an element removes it: the removal sticks, even though the
  /// other device still holds the element and adds another one concurrently.
  @Test(arguments: Backend.allCases)
  func aRemovalByADeviceThatSawTheElementSticks(backend: Backend) {
    let (harness, a, b) = devices(.set, key: "favorites", backend: backend)
    a.set(PropertyListValue.strings("home", "work"), "favorites")
    harness.round()
    b.set(PropertyListValue.strings("home"), "favorites")  // B saw work, removes it
    a.set(PropertyListValue.strings("home", "work", "gym"), "favorites")  // A adds gym meanwhile
    harness.driver.upload(from: "B")
    harness.driver.upload(from: "A")
    for _ in 0..<3 { harness.round() }
    for device in [a, b] {
      guard case .array(let items)? = device.value("favorites") else {
        Issue.record("\(device.name) holds no array")
        continue
      }
      #expect(Set(items) == [.string("home"), .string("gym")], "\(device.name)")
    }
  }

  /// The highest score wins, whichever device's write the store kept.
  @Test(arguments: Backend.allCases)
  func maxKeepsTheHighestScore(backend: Backend) {
    let (harness, a, b) = devices(.max, key: "highScore", backend: backend)
    a.set(.integer(10), "highScore")
    harness.round()
    a.set(.integer(30), "highScore")
    b.set(.integer(20), "highScore")
    harness.driver.upload(from: "A")
    harness.driver.upload(from: "B")  // the store keeps B's 20
    for _ in 0..<3 { harness.round() }
    #expect(harness.values(of: "highScore") == ["A": .integer(30), "B": .integer(30)])
  }

  /// Entries edited on different devices both survive in one dictionary key.
  @Test(arguments: Backend.allCases)
  func dictionaryEntriesFromBothDevicesSurvive(backend: Backend) {
    let (harness, a, b) = devices(.dictionary, key: "progress", backend: backend)
    a.set(.dictionary(["level1": .bool(true)]), "progress")
    harness.round()
    a.set(.dictionary(["level1": .bool(true), "level2": .bool(true)]), "progress")
    b.set(.dictionary(["level1": .bool(true), "bonus": .bool(true)]), "progress")
    harness.driver.upload(from: "B")
    harness.driver.upload(from: "A")
    for _ in 0..<3 { harness.round() }
    let expected: PropertyListValue = .dictionary(["level1": .bool(true), "level2": .bool(true), "bonus": .bool(true)])
    #expect(harness.values(of: "progress") == ["A": expected, "B": expected])
  }

  /// A set key's state survives a relaunch.
  @Test(arguments: Backend.allCases)
  func theMergeBaseIsSavedWithTheLedger(backend: Backend) {
    let (harness, a, b) = devices(.set, key: "favorites", backend: backend)
    a.set(PropertyListValue.strings("home", "work"), "favorites")
    harness.round()
    b.restart()
    let cached = b.coordinator.engine.state.withLock { $0.ledger["favorites"]?.state }
    guard case .replica(let record) = RemoteState(storeValue: b.syncStore.value(forKey: "favorites")) else {
      Issue.record("no state record in the store")
      return
    }
    #expect(cached == record.state)
    #expect(cached?.partCount == 2)
    b.set(PropertyListValue.strings("home"), "favorites")
    a.set(PropertyListValue.strings("home", "work", "gym"), "favorites")
    harness.driver.upload(from: "A")
    harness.driver.upload(from: "B")
    for _ in 0..<3 { harness.round() }
    #expect(
      harness.values(of: "favorites").values.allSatisfy { value in
        if case .array(let items)? = value { Set(items) == [.string("home"), .string("gym")] } else { false }
      })
  }
}

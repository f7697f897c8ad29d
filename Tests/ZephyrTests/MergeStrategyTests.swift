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

  /// A state `origin` wrote at `generation` holding `value`, having seen `seen` (and with
  /// `parts`: elements or entries of an earlier write, by their stamps).
  private func state(
    _ strategy: MergeStrategy, _ value: PropertyListValue?, by origin: String, at generation: UInt64,
    seen: [String: UInt64] = [:], parts: [Stamp] = []
  ) -> MergeState {
    var versions = VersionVector(seen)
    versions.include(stamp(origin, generation))
    let own = stamp(origin, generation)
    var data = MergeData.implied(by: own, value: value, strategy: strategy)
    if case .elements = data, let items = value?.arrayItems {
      var elements: [Fingerprint: [Stamp]] = [:]
      for (index, item) in items.enumerated() {
        elements[item.fingerprint] = [index < parts.count ? parts[index] : own]
      }
      data = .elements(elements)
    }
    return MergeState(value: value, versions: versions, data: data, stamp: own)
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
    let a = state(.max, .integer(30), by: "A", at: 2, seen: ["C": 1])
    let b = state(.max, .integer(20), by: "B", at: 2, seen: ["C": 1])
    let ab = MergeStrategy.max.merge(key: "k", a, b)
    let ba = MergeStrategy.max.merge(key: "k", b, a)
    #expect(ab.value == .integer(30))
    #expect(ab.data == ba.data && ab.value == ba.value)
    // B lowers its own score after seeing only its own: A's 30 stays, B's 20 is gone.
    let lowered = state(.max, .integer(5), by: "B", at: 3, seen: ["B": 2, "C": 1])
    let merged = MergeStrategy.max.merge(
      key: "k",
      MergeState(value: ab.value, versions: a.versions.joined(with: b.versions), data: ab.data, stamp: stamp("A", 4)),
      lowered)
    #expect(merged.value == .integer(30))
    #expect(
      merged.data
        == .siblings([
          .init(stamp: stamp("A", 2), value: .integer(30)), .init(stamp: stamp("B", 3), value: .integer(5)),
        ]))
  }

  @Test func unionKeepsEveryElementOnce() {
    let a = state(.union, PropertyListValue.strings("a", "b"), by: "A", at: 2)
    let b = state(.union, PropertyListValue.strings("b", "c"), by: "B", at: 3)
    #expect(MergeStrategy.union.merge(key: "k", a, b).value == PropertyListValue.strings("b", "c", "a"))
    #expect(
      MergeStrategy.union.merge(key: "k", b, a).value == PropertyListValue.strings("b", "c", "a"),
      "the later state's order first")
  }

  /// An element one side lacks is removed when that side saw the write that added it,
  /// kept when it did not: adds and removes of both sides survive.
  @Test func setKeepsAddsAndRemovesOfBothSides() {
    let base = [stamp("O", 1), stamp("O", 1), stamp("O", 1)]
    // Both saw O's {a, b, c}; A removed b and added d; B removed c and added e.
    let a = state(
      .set, PropertyListValue.strings("a", "c", "d"), by: "A", at: 2, seen: ["O": 1], parts: [base[0], base[2]])
    let b = state(
      .set, PropertyListValue.strings("a", "b", "e"), by: "B", at: 2, seen: ["O": 1], parts: [base[0], base[1]])
    #expect(
      Set(MergeStrategy.set.merge(key: "k", a, b).value?.arrayItems ?? [])
        == Set(PropertyListValue.strings("a", "d", "e").arrayItems ?? []))
    // Without a shared write every element survives.
    let x = state(.set, PropertyListValue.strings("a"), by: "X", at: 1)
    let y = state(.set, PropertyListValue.strings("b"), by: "Y", at: 1)
    #expect(
      Set(MergeStrategy.set.merge(key: "k", x, y).value?.arrayItems ?? [])
        == Set(PropertyListValue.strings("a", "b").arrayItems ?? []))
    // A delete removes what its device saw; a concurrent add stays.
    let cleared = MergeState(
      value: nil, versions: VersionVector(["O": 1, "A": 3]), data: .elements([:]), stamp: stamp("A", 3))
    #expect(MergeStrategy.set.merge(key: "k", cleared, b).value == PropertyListValue.strings("e"))
    #expect(
      MergeStrategy.set.merge(key: "k", cleared, state(.set, PropertyListValue.strings("a"), by: "O", at: 1)).value
        == nil)
  }

  /// Per entry: the side that saw the other's write changed it after; concurrent changes
  /// go to the later write; a removal by a side that saw the entry sticks.
  @Test func dictionaryMergesPerEntry() {
    let o = stamp("O", 1)
    func entries(_ values: [String: (Int64, Stamp)]) -> MergeData {
      .entries(values.mapValues { [MergeData.Sibling(stamp: $0.1, value: .integer($0.0))] })
    }
    // Both saw O's {x: 1, y: 1, z: 1}.
    let a = MergeState(
      value: .dictionary(["x": .integer(2), "y": .integer(1), "w": .integer(5)]),
      versions: VersionVector(["O": 1, "A": 2]),
      data: entries(["x": (2, stamp("A", 2)), "y": (1, o), "w": (5, stamp("A", 2))]), stamp: stamp("A", 2))
    let b = MergeState(
      value: .dictionary(["x": .integer(3), "y": .integer(4), "z": .integer(1)]),
      versions: VersionVector(["O": 1, "B": 3]),
      data: entries(["x": (3, stamp("B", 3)), "y": (4, stamp("B", 3)), "z": (1, o)]), stamp: stamp("B", 3))
    let expected: PropertyListValue = .dictionary(["x": .integer(3), "y": .integer(4), "w": .integer(5)])
    #expect(MergeStrategy.dictionary.merge(key: "k", a, b).value == expected)
    #expect(MergeStrategy.dictionary.merge(key: "k", b, a).value == expected)
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

  private func devices(_ strategy: MergeStrategy, key: String) -> (Harness, TestDevice, TestDevice) {
    let harness = Harness()
    let devices = harness.devices(["A", "B"], merging: key, by: strategy)
    return (harness, devices[0], devices[1])
  }

  /// Both devices add a favorite while neither has seen the other's; whichever upload
  /// the store keeps, both adds survive, and a quiet round writes nothing.
  @Test(arguments: [["A", "B"], ["B", "A"]])
  func concurrentAddsToASetBothSurvive(uploadOrder: [String]) {
    let (harness, a, b) = devices(.set, key: "favorites")
    a.set(PropertyListValue.strings("home"), "favorites")
    harness.round()
    #expect(b.value("favorites") == PropertyListValue.strings("home"))

    a.set(PropertyListValue.strings("home", "work"), "favorites")
    b.set(PropertyListValue.strings("home", "gym"), "favorites")
    for name in uploadOrder { harness.cloud.upload(from: name) }
    for _ in 0..<3 { harness.round() }
    for device in [a, b] {
      guard case .array(let items)? = device.value("favorites") else {
        Issue.record("\(device.name) holds no array")
        continue
      }
      #expect(Set(items) == [.string("home"), .string("work"), .string("gym")], "\(device.name)")
    }
    #expect(a.value("favorites") == b.value("favorites"))
    let writes = [a, b].map { $0.store.statistics.writes }
    harness.round()
    #expect([a, b].map { $0.store.statistics.writes } == writes, "a quiet round writes nothing")
  }

  /// A device that had seen an element removes it: the removal sticks, even though the
  /// other device still holds the element and adds another one concurrently.
  @Test func aRemovalByADeviceThatSawTheElementSticks() {
    let (harness, a, b) = devices(.set, key: "favorites")
    a.set(PropertyListValue.strings("home", "work"), "favorites")
    harness.round()
    b.set(PropertyListValue.strings("home"), "favorites")  // B saw work, removes it
    a.set(PropertyListValue.strings("home", "work", "gym"), "favorites")  // A adds gym meanwhile
    harness.cloud.upload(from: "B")
    harness.cloud.upload(from: "A")
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
  @Test func maxKeepsTheHighestScore() {
    let (harness, a, b) = devices(.max, key: "highScore")
    a.set(.integer(10), "highScore")
    harness.round()
    a.set(.integer(30), "highScore")
    b.set(.integer(20), "highScore")
    harness.cloud.upload(from: "A")
    harness.cloud.upload(from: "B")  // the store keeps B's 20
    for _ in 0..<3 { harness.round() }
    #expect(harness.values(of: "highScore") == ["A": .integer(30), "B": .integer(30)])
  }

  /// Entries edited on different devices both survive in one dictionary key.
  @Test func dictionaryEntriesFromBothDevicesSurvive() {
    let (harness, a, b) = devices(.dictionary, key: "progress")
    a.set(.dictionary(["level1": .bool(true)]), "progress")
    harness.round()
    a.set(.dictionary(["level1": .bool(true), "level2": .bool(true)]), "progress")
    b.set(.dictionary(["level1": .bool(true), "bonus": .bool(true)]), "progress")
    harness.cloud.upload(from: "B")
    harness.cloud.upload(from: "A")
    for _ in 0..<3 { harness.round() }
    let expected: PropertyListValue = .dictionary(["level1": .bool(true), "level2": .bool(true), "bonus": .bool(true)])
    #expect(harness.values(of: "progress") == ["A": expected, "B": expected])
  }

  /// A set key's memory (the agreed value and its base) survives a relaunch.
  @Test func theMergeBaseIsSavedWithTheLedger() {
    let (harness, a, b) = devices(.set, key: "favorites")
    a.set(PropertyListValue.strings("home", "work"), "favorites")
    harness.round()
    b.restart()
    let memory = b.coordinator.state.withLock { $0.ledger["favorites"]?.memory }
    #expect(memory?.versions == b.record("favorites")?.versions)
    if case .elements(let elements)? = memory?.data {
      #expect(elements.count == 2)
    } else {
      Issue.record("no element stamps remembered")
    }
    b.set(PropertyListValue.strings("home"), "favorites")
    a.set(PropertyListValue.strings("home", "work", "gym"), "favorites")
    harness.cloud.upload(from: "A")
    harness.cloud.upload(from: "B")
    for _ in 0..<3 { harness.round() }
    #expect(
      harness.values(of: "favorites").values.allSatisfy { value in
        if case .array(let items)? = value { Set(items) == [.string("home"), .string("gym")] } else { false }
      })
  }
}

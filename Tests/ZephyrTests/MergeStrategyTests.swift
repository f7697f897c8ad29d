import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 11, part 2: merge strategies, pure and across devices.
struct MergeStrategyTests {
  private func strings(_ items: String...) -> PropertyListValue { .array(items.map { .string($0) }) }

  private func resolve(
    _ strategy: MergeStrategy, _ local: PropertyListValue?, _ remote: PropertyListValue?,
    base: PropertyListValue? = nil, policy: MismatchPolicy = .preferLocal
  ) -> ConflictResolution {
    strategy.resolve(Conflict(key: "k", local: local, remote: remote), base: base, policy: policy)
  }

  // MARK: Pure

  @Test func maxAndMinCompareNumbersDatesAndStrings() {
    #expect(resolve(.max, .integer(3), .integer(7)) == .keepRemote)
    #expect(resolve(.max, .double(9.5), .integer(7)) == .keepLocal)
    #expect(resolve(.min, .integer(3), .integer(7)) == .keepLocal)
    #expect(resolve(.max, .date(Date(timeIntervalSince1970: 5)), .date(Date(timeIntervalSince1970: 4))) == .keepLocal)
    #expect(resolve(.min, .string("b"), .string("a")) == .keepRemote)
    // Not comparable, or a delete: last-writer-wins decides.
    #expect(resolve(.max, .string("3"), .integer(7)) == .usePolicy)
    #expect(resolve(.max, nil, .integer(7)) == .usePolicy)
  }

  @Test func aTieIsBrokenTheSameWayOnEveryDevice() {
    let onA = resolve(.max, .integer(3), .double(3))
    let onB = resolve(.max, .double(3), .integer(3))
    #expect(onA != onB, "each device keeps the same value, so one keeps local and the other remote")
    #expect(Set([onA, onB].map { "\($0)" }) == ["keepLocal", "keepRemote"])
  }

  @Test func unionKeepsEveryElementOnce() {
    #expect(resolve(.union, strings("a", "b"), strings("b", "c")) == .merged(strings("a", "b", "c")))
    #expect(resolve(.union, strings("a"), strings("a", "b")) == .keepRemote)
    #expect(resolve(.union, strings("a", "b"), strings("b")) == .keepLocal)
  }

  @Test func setKeepsAddsAndRemovesOfBothSides() {
    let base = strings("a", "b", "c")
    // Local removed b and added d; remote removed c and added e.
    let merged = resolve(.set, strings("a", "c", "d"), strings("a", "b", "e"), base: base)
    #expect(merged == .merged(strings("a", "d", "e")))
    // Without a base every element survives.
    #expect(resolve(.set, strings("a"), strings("b")) == .merged(strings("a", "b")))
    // The same elements in another order are one set: both devices keep the same array.
    let onA = resolve(.set, strings("a", "b"), strings("b", "a"), base: base)
    let onB = resolve(.set, strings("b", "a"), strings("a", "b"), base: base)
    #expect(Set(["\(onA)", "\(onB)"]) == ["keepLocal", "keepRemote"])
  }

  @Test func dictionaryMergesPerEntry() {
    let base: PropertyListValue = .dictionary(["x": .integer(1), "y": .integer(1), "z": .integer(1)])
    let local: PropertyListValue = .dictionary(["x": .integer(2), "y": .integer(1), "w": .integer(5)])  // z removed
    let remote: PropertyListValue = .dictionary(["x": .integer(3), "y": .integer(4), "z": .integer(1)])
    #expect(
      resolve(.dictionary, local, remote, base: base, policy: .preferLocal)
        == .merged(.dictionary(["x": .integer(2), "y": .integer(4), "w": .integer(5)])))
    #expect(
      resolve(.dictionary, local, remote, base: base, policy: .preferRemote)
        == .merged(.dictionary(["x": .integer(3), "y": .integer(4), "w": .integer(5)])))
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
    let configure: (inout SyncConfiguration) -> Void = { $0.mergeStrategies[key] = strategy }
    let a = harness.device("A", monitored: [key], configure: configure)
    let b = harness.device("B", monitored: [key], configure: configure)
    return (harness, a, b)
  }

  /// Both devices add a favorite while neither has seen the other's; whichever upload
  /// the store keeps, both adds survive, and a quiet round writes nothing.
  @Test(arguments: [["A", "B"], ["B", "A"]])
  func concurrentAddsToASetBothSurvive(uploadOrder: [String]) {
    let (harness, a, b) = devices(.set, key: "favorites")
    a.set(strings("home"), "favorites")
    harness.round()
    #expect(b.value("favorites") == strings("home"))

    a.set(strings("home", "work"), "favorites")
    b.set(strings("home", "gym"), "favorites")
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
    a.set(strings("home", "work"), "favorites")
    harness.round()
    b.set(strings("home"), "favorites")  // B saw work, removes it
    a.set(strings("home", "work", "gym"), "favorites")  // A adds gym meanwhile
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
    a.set(strings("home", "work"), "favorites")
    harness.round()
    b.restart()
    let memory = b.coordinator.state.withLock { $0.ledger["favorites"]?.memory }
    #expect(memory?.agreed == strings("home", "work"))
    #expect(memory?.baseValue == strings("home", "work"))
    b.set(strings("home"), "favorites")
    a.set(strings("home", "work", "gym"), "favorites")
    harness.cloud.upload(from: "A")
    harness.cloud.upload(from: "B")
    for _ in 0..<3 { harness.round() }
    #expect(
      harness.values(of: "favorites").values.allSatisfy { value in
        if case .array(let items)? = value { Set(items) == [.string("home"), .string("gym")] } else { false }
      })
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Strategy keys over unusual values converge and lose nothing: NaN under `.max`,
/// dictionaries under `.custom`, foreign values, arrays of non-arrays, an account change,
/// a delete beside a value, an element equal to the store's.
struct StrategyUnusualValueTests {
  /// The larger dictionary wins; ties go to the later write.
  private static let moreEntries = MergeStrategy.custom { conflict in
    guard case .dictionary(let mine)? = conflict.local, case .dictionary(let theirs)? = conflict.remote else {
      return .usePolicy
    }
    return mine.count > theirs.count ? .keepLocal : .keepRemote
  }

  /// A `.custom` key whose values are dictionaries (a Codable struct is stored as one):
  /// the merged record, which carries siblings, reads back on every device, the devices
  /// converge, and a further round writes nothing. (Its merge data was once read as a
  /// dictionary's entries, rejected as malformed, and republished forever.)
  @Test func aCustomKeyOverDictionariesConvergesQuietly() {
    let harness = Harness()
    let devices = harness.devices(["A", "B"], merging: "layout", by: Self.moreEntries)
    let (a, b) = (devices[0], devices[1])
    a.set(.dictionary(["columns": .integer(2)]), "layout")
    b.set(.dictionary(["columns": .integer(3), "rows": .integer(4)]), "layout")
    for _ in 0..<3 { harness.round() }
    let expected: PropertyListValue = .dictionary(["columns": .integer(3), "rows": .integer(4)])
    #expect(harness.values(of: "layout") == ["A": expected, "B": expected])
    #expect(a.coordinator.status.refusedKeys["layout"] == nil)
    #expect(b.coordinator.status.refusedKeys["layout"] == nil)
    let writes = [a, b].map { $0.store.statistics.writes }
    harness.round()
    #expect([a, b].map { $0.store.statistics.writes } == writes, "a quiet round writes nothing")
  }

  /// A `.max` key holding NaN (which compares as neither more nor less than any number):
  /// concurrent writes with NaN among them settle on one value on every device, and a
  /// further round writes nothing.
  @Test(arguments: [(Double.nan, 5.0), (5.0, Double.nan), (Double.nan, -Double.nan)])
  func aMaxKeyHoldingNaNConvergesQuietly(_ values: (Double, Double)) {
    let harness = Harness()
    let devices = harness.devices(["A", "B", "C"], merging: "score", by: .max)
    devices[0].set(.double(values.0), "score")
    devices[1].set(.double(values.1), "score")
    devices[2].set(.double(3), "score")
    for _ in 0..<3 { harness.round() }
    let fingerprints = Set(devices.map { $0.value("score")?.fingerprint })
    #expect(fingerprints.count == 1, "\(harness.values(of: "score"))")
    let writes = devices.map { $0.store.statistics.writes }
    harness.round()
    harness.round()
    #expect(devices.map { $0.store.statistics.writes } == writes, "a quiet round writes nothing")
  }

  /// C reaches, by an edit of its own, the value a merge of A's and B's writes holds:
  /// adopting that record joins its siblings without running the `.custom` rule under the
  /// coordinator's lock (debug builds stop on a rule called under a lock).
  @Test func adoptingAMergedRecordRunsNoCustomRuleUnderTheLock() {
    let harness = Harness()
    let longest = MergeStrategy.custom { conflict in
      guard case .string(let mine)? = conflict.local, case .string(let theirs)? = conflict.remote else {
        return .usePolicy
      }
      return mine.count >= theirs.count ? .keepLocal : .keepRemote
    }
    let devices = harness.devices(["A", "B", "C"], merging: "motto", by: longest)
    let (a, b, c) = (devices[0], devices[1], devices[2])
    a.set(.string("a long motto"), "motto")
    b.set(.string("short"), "motto")
    harness.cloud.upload(from: "B")
    harness.cloud.upload(from: "A")
    harness.cloud.download(to: "B", notify: true)  // B merges: "a long motto", siblings of both
    c.set(.string("a long motto"), "motto")  // C reaches the same value by its own edit
    for _ in 0..<3 { harness.round() }
    #expect(Set(harness.values(of: "motto").values) == [.string("a long motto")])
  }

  /// Two devices read two different foreign values of a `.set` key (each at a generation
  /// of its own): neither is taken for the other's earlier write, so what the later one
  /// holds survives B's edit of the earlier one.
  @Test func twoForeignValuesOfASetKeyAreNeverOneWritersWrites() {
    let harness = Harness()
    let devices = harness.devices(["A", "B"], merging: "fav", by: .set)
    let (a, b) = (devices[0], devices[1])
    harness.cloud.setServerValue(PropertyListValue.strings("q"), forKey: "fav")
    harness.cloud.download(to: "B", notify: true)
    #expect(b.value("fav") == PropertyListValue.strings("q"))
    harness.cloud.setServerValue(PropertyListValue.strings("p", "y"), forKey: "fav")
    harness.cloud.download(to: "A", notify: true)
    #expect(PropertyListValue.elements(of: a.value("fav")) == [.string("p"), .string("y")])
    b.set(PropertyListValue.strings("q", "z"), "fav")
    for _ in 0..<3 { harness.round() }
    for device in [a, b] {
      let held = PropertyListValue.elements(of: device.value("fav")) ?? []
      #expect(held.isSuperset(of: [.string("y"), .string("z")]), "\(device.name): \(held)")
    }
  }

  /// A and B each added x, and hold the same value under different records. A removes
  /// x while the store holds B's record: the removal carries B's write too, and sticks.
  @Test func aRemovalMadeOverAnotherRecordOfTheSameValueSticks() {
    let harness = Harness()
    let devices = harness.devices(["A", "B"], merging: "fav", by: .set)
    let (a, b) = (devices[0], devices[1])
    a.set(PropertyListValue.strings("x"), "fav")
    b.set(PropertyListValue.strings("x"), "fav")
    harness.cloud.upload(from: "A")
    harness.cloud.upload(from: "B")  // the store keeps B's record of the same value
    harness.cloud.download(to: "A", notify: false)
    a.set(PropertyListValue.strings(), "fav")
    for _ in 0..<3 { harness.round() }
    #expect(harness.values(of: "fav") == ["A": PropertyListValue.strings(), "B": PropertyListValue.strings()])
  }

  /// After an account change, a strategy key Zephyr does not monitor takes the new
  /// account's value at the next `sync()`: the other account's value is not merged in.
  @Test func afterAnAccountChangeAnUnmonitoredStrategyKeyTakesTheNewAccountsValue() {
    let harness = Harness()
    let configure: (inout SyncConfiguration) -> Void = { $0.mergeStrategies["fav"] = .set }
    let b = harness.device("B", configure: configure)
    b.set(PropertyListValue.strings("old account"), "fav")
    b.coordinator.sync()
    harness.cloud.upload()
    let other = harness.device("Other", configure: configure)
    harness.cloud.switchAccount(of: "Other", to: "work")
    other.set(PropertyListValue.strings("work"), "fav")
    other.coordinator.sync()
    harness.cloud.upload()

    harness.cloud.switchAccount(of: "B", to: "work")
    b.coordinator.sync()
    #expect(b.value("fav") == PropertyListValue.strings("work"))
    harness.cloud.upload()
    #expect(
      harness.cloud.serverValues(account: "work")["fav"].flatMap(Self.recordValue) == PropertyListValue.strings("work"))
  }

  private static func recordValue(_ stored: PropertyListValue) -> PropertyListValue? {
    switch RemoteState(storeValue: stored) {
    case .record(let record): record.content.value
    case .replica(let record): record.state.value(strategy: .set, key: "")
    default: nil
    }
  }
}

extension StrategyUnusualValueTests {
  /// Seed 116540. `.max` and `.min` keep the extreme of the values written alongside a
  /// delete, whatever their order: folded in stamp order, the delete once replaced the
  /// larger value before the smaller, later one replaced the delete.
  @Test func anExtremeKeepsTheValuesWrittenAlongsideADelete() {
    // A wrote 9, C deleted, B wrote 7, each from the same state: a delete holds no
    // sibling, so it gives way to both values.
    let base = ReplicaState(kind: .max).edited(to: .integer(5), dot: Stamp(generation: 1, origin: "O"))
    let writes: [ReplicaState] = [(2, "A", 9), (2, "C", nil), (3, "B", 7)].map {
      (generation: UInt64, origin: String, value: Int64?) in
      base.edited(to: value.map { .integer($0) }, dot: Stamp(generation: generation, origin: origin))
    }
    for order in [writes, writes.reversed(), [writes[1], writes[0], writes[2]]] {
      let merged = order.dropFirst().reduce(order[0]) { $0.joined(with: $1) }
      #expect(merged.value(strategy: .max, key: "n") == .integer(9))
      #expect(
        ReplicaState(kind: .min, groups: merged.groups, context: merged.context).value(strategy: .min, key: "n")
          == .integer(7))
    }
    let deletes = [writes[1], base.edited(to: nil, dot: Stamp(generation: 3, origin: "B"))]
    #expect(deletes[0].joined(with: deletes[1]).value(strategy: .max, key: "n") == nil, "deletes alone")
  }
}

extension StrategyUnusualValueTests {
  /// A `.set` key holding values that are no arrays (an older build wrote strings) is
  /// refused by name on each device, which keeps its own value: never merged to an empty
  /// array, never silently last-writer-wins.
  @Test func aSetKeyHoldingNoArraysIsRefusedByName() {
    let harness = Harness()
    let devices = harness.devices(["A", "B"], merging: "tags", by: .set)
    let (a, b) = (devices[0], devices[1])
    a.set(.string("a,b"), "tags")
    b.set(.string("c"), "tags")
    for _ in 0..<3 { harness.round() }
    #expect(harness.values(of: "tags") == ["A": .string("a,b"), "B": .string("c")])
    for device in [a, b] {
      #expect(device.coordinator.status.refusedKeys["tags"] == .strategyCannotMerge(strategy: "set", value: "string"))
    }
    #expect(harness.cloud.serverValues["tags"] == nil)
  }

  /// A adds x and y without having been told of B's add of x, which its store already
  /// holds; C removes x after seeing B's add. A's add of x was made alongside that removal
  /// and stays (it was once credited to B's write, and went with it).
  @Test func anAddMadeBesideTheStoresEqualElementIsThisDevicesOwn() {
    let harness = Harness()
    let devices = harness.devices(["A", "B", "C"], merging: "fav", by: .set)
    let (a, b, c) = (devices[0], devices[1], devices[2])
    b.set(PropertyListValue.strings("x"), "fav")
    harness.cloud.upload(from: "B")
    harness.cloud.download(to: "A", notify: false)
    harness.cloud.download(to: "C", notify: true)
    #expect(c.value("fav") == PropertyListValue.strings("x"))
    c.set(PropertyListValue.strings(), "fav")
    a.set(PropertyListValue.strings("x", "y"), "fav")
    for _ in 0..<3 { harness.round() }
    for device in [a, b, c] {
      #expect(PropertyListValue.elements(of: device.value("fav")) == [.string("x"), .string("y")], "\(device.name)")
    }
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// State records at their edges: a forged generation is refused, the parts of one write
/// have one order, a `.custom` key merged before its first use keeps every sibling, an
/// emptied list and a deleted one stay apart.
struct StrategyStateRecordEdgeTests {
  /// A state record whose context claims a generation far above anything the device has
  /// seen is refused as forged: it would pin the device's clock, and then every write
  /// would reuse one name.
  @Test func aStateRecordClaimingAnAbsurdGenerationIsRefused() {
    let harness = Harness()
    let a = harness.devices(["A"], merging: "fav", by: .set)[0]
    a.set(PropertyListValue.strings("x"), "fav")
    harness.cloud.upload()
    let forged: PropertyListValue = .array([
      .string("z2"), .integer(5), .string("evil"), .string("set"), .array([.string("evil")]),
      .data(Varint.encode([Generation.maximum])),
      .array([.array([.integer(0), .integer(Int64(Generation.maximum)), .string("q")])]),
    ])
    harness.cloud.setServerValue(forged, forKey: "fav")
    harness.cloud.download(to: "A", notify: true)
    guard case .malformedRecord? = a.coordinator.status.refusedKeys["fav"] else {
      Issue.record("not refused: \(String(describing: a.coordinator.status.refusedKeys["fav"]))")
      return
    }
    // Treated as absent: the device's own state goes out again over it.
    harness.cloud.upload()
    guard case .replica(let record) = RemoteState(storeValue: harness.cloud.serverValues["fav"]) else {
      Issue.record("no state record")
      return
    }
    #expect(record.stamp.origin == "A" && record.state.context.maximum < Generation.maximumJump)
    #expect(a.coordinator.engine.state.withLock { $0.ledger.clock } < Generation.maximumJump)
    #expect(PropertyListValue.elements(of: a.value("fav")) == [.string("x")])
  }

  /// The parts of one write are held in one order whatever order a device built them in
  /// (two devices that built one write of two entries differently agree, and do not push
  /// forever).
  @Test func partsOfOneWriteHaveOneOrder() {
    let dot = Stamp(generation: 4, origin: "C")
    let one = ReplicaState(
      kind: .dictionary, groups: [dot: [.array([.string("a"), .integer(1)]), .array([.string("b"), .integer(2)])]],
      context: VersionVector(["C": 4]))
    let other = ReplicaState(
      kind: .dictionary, groups: [dot: [.array([.string("b"), .integer(2)]), .array([.string("a"), .integer(1)])]],
      context: VersionVector(["C": 4]))
    #expect(one == other)
    #expect(one.joined(with: other) == other.joined(with: one))
  }

  /// A `.custom` key that a device merged before the key's first use (a `sync()` at
  /// launch, the rule not declared yet) keeps every sibling once the rule is declared:
  /// the value shown then is no edit.
  @Test func aCustomKeySyncedBeforeItsFirstUseKeepsEverySibling() {
    let joined = SyncKey<String>(
      "motto", default: "",
      merge: .custom { conflict in
        guard case .string(let first)? = conflict.local, case .string(let second)? = conflict.remote else {
          return .usePolicy
        }
        return .merged(.string([first, second].sorted().joined(separator: "+")))
      })
    let harness = Harness()
    let (a, b, c) = (harness.device("A"), harness.device("B"), harness.device("C"))
    a.coordinator[joined] = "a"
    b.coordinator[joined] = "b"
    a.settle()
    b.settle()
    harness.cloud.upload(from: "A")
    harness.cloud.download(to: "B", notify: true)  // B merges: both siblings, "a+b"
    harness.cloud.upload(from: "B")
    harness.cloud.download(to: "C", notify: false)
    c.coordinator.sync()  // before the key's first use: no rule yet
    #expect(c.coordinator[joined] != "")
    c.settle()
    for _ in 0..<3 { harness.round() }
    for device in [a, b, c] { #expect(device.coordinator[joined] == "a+b", "\(device.name)") }
  }

  /// An empty collection and a deleted one are two values: a delete reads as the key's
  /// default everywhere, an emptied list as empty everywhere.
  @Test func anEmptiedListAndADeletedOneConvergeApart() {
    let favorites = SyncKey<[String]>("fav", default: ["starter"], merge: .set)
    let harness = Harness()
    let (a, b) = (harness.device("A"), harness.device("B"))
    a.coordinator[favorites] = ["x"]
    a.settle()
    for _ in 0..<2 { harness.round() }
    a.coordinator.removeValue(for: favorites)
    a.settle()
    for _ in 0..<2 { harness.round() }
    #expect(a.coordinator[favorites] == ["starter"])
    #expect(b.coordinator[favorites] == ["starter"])
    b.coordinator[favorites] = []
    b.settle()
    for _ in 0..<2 { harness.round() }
    #expect(a.coordinator[favorites] == [])
    #expect(b.coordinator[favorites] == [])
  }
}

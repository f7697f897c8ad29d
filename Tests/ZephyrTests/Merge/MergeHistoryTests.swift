import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Keys merged by a strategy tell a record made after their agreed state from one made
/// alongside it by the writes each includes (``VersionVector``), and merge three-way
/// against the latest state both sides share. Each test here failed before that.
struct MergeHistoryTests {
  private func devices(
    _ strategy: MergeStrategy, key: String, names: [String] = ["A", "B"]
  ) -> (Harness, [TestDevice]) {
    let harness = Harness()
    return (harness, harness.devices(names, merging: key, by: strategy))
  }

  /// A, B and C agree on {a}. B adds x, A takes it and adds z, B takes that. C, which saw
  /// neither, removes a. x and z survive: C never saw them. (The merge once used the
  /// newest base it knew of, {a, x}, and dropped x as if C had removed it.)
  @Test func anElementAddedElsewhereSurvivesARemovalByADeviceThatNeverSawIt() {
    let (harness, devices) = self.devices(.set, key: "fav", names: ["A", "B", "C"])
    let (a, b, c) = (devices[0], devices[1], devices[2])
    a.set(PropertyListValue.strings("a"), "fav")
    harness.round()
    b.set(PropertyListValue.strings("a", "x"), "fav")
    harness.cloud.upload(from: "B")
    harness.cloud.download(to: "A", notify: true)
    #expect(a.value("fav") == PropertyListValue.strings("a", "x"))
    a.set(PropertyListValue.strings("a", "x", "z"), "fav")
    harness.cloud.upload(from: "A")
    harness.cloud.download(to: "B", notify: true)
    c.set(PropertyListValue.strings(), "fav")
    harness.cloud.upload(from: "C")
    for _ in 0..<3 { harness.round() }
    for device in devices {
      #expect(PropertyListValue.elements(of: device.value("fav")) == [.string("x"), .string("z")], "\(device.name)")
    }
  }

  /// B changes nothing and only misses A's middle write: A's latest write wins, for every
  /// strategy (a device that missed a write once merged with the one after it, and undid
  /// a deliberate decrease of a `.max` key).
  @Test(arguments: ["max", "min", "union", "set", "dictionary", "custom"])
  func aDeviceThatMissedAWriteTakesTheLatest(strategy name: String) {
    let (strategy, values) = Self.sequence(name)
    let (harness, devices) = self.devices(strategy, key: "k")
    let (a, b) = (devices[0], devices[1])
    a.set(values[0], "k")
    harness.round()
    #expect(b.value("k") == values[0])
    a.set(values[1], "k")
    harness.cloud.upload(from: "A")
    a.set(values[2], "k")
    harness.cloud.upload(from: "A")
    harness.cloud.download(to: "B", notify: true)
    for _ in 0..<3 { harness.round() }
    #expect(harness.values(of: "k") == ["A": values[2], "B": values[2]], "\(name)")
  }

  /// Three values a device writes in a row, each a step that strategy would not take on
  /// its own (a decrease for `.max`, a removal for the collections).
  private static func sequence(_ name: String) -> (MergeStrategy, [PropertyListValue]) {
    let list = { (items: [String]) in PropertyListValue.array(items.map { .string($0) }) }
    switch name {
    case "max": return (.max, [.integer(10), .integer(20), .integer(0)])
    case "min": return (.min, [.integer(10), .integer(5), .integer(30)])
    case "union": return (.union, [list(["a", "b"]), list(["a", "b", "c"]), list(["a"])])
    case "set": return (.set, [list(["a", "b"]), list(["a", "b", "c"]), list(["a"])])
    case "dictionary":
      return (
        .dictionary,
        [.dictionary(["x": .integer(1)]), .dictionary(["x": .integer(2), "y": .integer(1)]), .dictionary([:])]
      )
    default: return (.custom({ _ in .keepLocal }), [.string("v0"), .string("v1"), .string("v2")])
    }
  }

  /// A clears a `.set` key while B, which A never heard from, adds to it: A's delete
  /// removes what A had, B's addition stays. (A delete once fell back to
  /// last-writer-wins, which kept B's whole array, "home" included.)
  @Test(arguments: [["A", "B"], ["B", "A"]])
  func aDeleteOfASetKeyRemovesWhatItsDeviceHadAndKeepsConcurrentAdds(uploadOrder: [String]) {
    let (harness, devices) = self.devices(.set, key: "fav")
    let (a, b) = (devices[0], devices[1])
    a.set(PropertyListValue.strings("home"), "fav")
    harness.round()
    b.set(PropertyListValue.strings("home", "gym"), "fav")
    a.remove("fav")
    for name in uploadOrder { harness.cloud.upload(from: name) }
    for _ in 0..<3 { harness.round() }
    #expect(
      harness.values(of: "fav") == ["A": PropertyListValue.strings("gym"), "B": PropertyListValue.strings("gym")])
    let writes = devices.map { $0.store.statistics.writes }
    harness.round()
    #expect(devices.map { $0.store.statistics.writes } == writes, "a quiet round writes nothing")
  }

  /// A delete of a `.set` key that no other device changed meanwhile propagates as a
  /// delete, not as an empty array.
  @Test func aDeleteOfASetKeyPropagates() {
    let (harness, devices) = self.devices(.set, key: "fav")
    devices[0].set(PropertyListValue.strings("home"), "fav")
    harness.round()
    devices[1].remove("fav")
    for _ in 0..<2 { harness.round() }
    #expect(harness.values(of: "fav") == ["A": nil, "B": nil])
  }

  /// `.max` and `.min` compare integers exactly: above 2^53, two integers that are equal
  /// as `Double` still order.
  @Test func maxAndMinCompareLargeIntegersExactly() {
    let big: Int64 = 1 << 60 + 1
    let pairs: [(PropertyListValue, PropertyListValue)] = [
      (.integer(big), .integer(big - 1)), (.unsignedInteger(UInt64.max), .unsignedInteger(UInt64.max - 1)),
      (.unsignedInteger(UInt64(Int64.max) + 1), .integer(Int64.max)), (.integer(0), .integer(-1)),
    ]
    for (larger, smaller) in pairs {
      #expect(MergeStrategy.max.resolve(Conflict(key: "k", local: larger, remote: smaller)) == .keepLocal)
      #expect(MergeStrategy.max.resolve(Conflict(key: "k", local: smaller, remote: larger)) == .keepRemote)
      #expect(MergeStrategy.min.resolve(Conflict(key: "k", local: larger, remote: smaller)) == .keepRemote)
    }
  }

  // MARK: The record

  /// A last-writer-wins record has four fields; one with more (a fifth that is not the
  /// writer's sent time) is malformed: treated as absent and reported, never a crash.
  @Test(arguments: [
    PropertyListValue.array([.string("b7d2mx"), .integer(7)]), .string("a"), .data(Data([1, 0, 9])),
  ])
  func aRecordWithMoreThanFourFieldsIsMalformed(extra: PropertyListValue) {
    let record = SyncRecord(generation: 9, origin: "k3f9qa", content: .value(.string("x")))
    #expect(record.encoded == .array([.string("z1"), .integer(9), .string("k3f9qa"), .string("x")]))
    #expect(RemoteState(storeValue: record.encoded) == .record(record))
    let longer: PropertyListValue = .array([.string("z1"), .integer(9), .string("k3f9qa"), .string("x"), extra])
    if case .malformed = RemoteState(storeValue: longer) {} else { Issue.record("\(extra) accepted") }
  }

  @Test func versionVectorsOrder() {
    let mine = VersionVector(["a": 3, "b": 2])
    #expect(mine.order(of: VersionVector(["a": 3, "b": 2])) == .same)
    #expect(mine.order(of: VersionVector(["a": 3, "b": 4])) == .after)
    #expect(mine.order(of: VersionVector(["a": 3])) == .before)
    #expect(mine.order(of: VersionVector(["a": 2, "c": 1])) == .concurrent)
  }

  /// Appends that carry large strategy states compact the ledger file soon, whatever the
  /// record count: once the bytes appended pass the last snapshot's size (and 512 KB).
  @Test func largeStatesCompactTheJournal() {
    var ledger = Ledger(epoch: "e")
    var journal = LedgerJournal()
    func bytes(of save: LedgerJournal.Save) -> Int {
      switch save.kind {
      case .append(let changes, let clock, let references):
        LedgerCodec.journal(changes, clock: clock, references: references).count
      case .snapshot(let ledger): LedgerCodec.snapshot(ledger).count
      }
    }
    let big = PropertyListValue.string(String(repeating: "v", count: 60_000))
    var entry = LedgerEntry(generation: 1, agreed: LedgerEntry.Agreed(big), origin: "a")
    entry.state = ReplicaState(kind: .max).edited(to: big, dot: Stamp(generation: 1, origin: "a"))
    var appends = 0
    for index in 0..<20 {
      ledger["k\(index)"] = entry
      journal.note("k\(index)", entry)
      guard let save = journal.pendingSave(of: ledger) else { continue }
      if case .snapshot = save.kind { break }
      journal.saved(save, bytes: bytes(of: save), ledger: ledger)
      appends += 1
    }
    #expect(appends == 9, "nine states of 60 KB pass 512 KB")
    guard let snapshot = journal.pendingSave(of: ledger), case .snapshot = snapshot.kind else {
      Issue.record("the tenth compacts the file")
      return
    }
    journal.saved(snapshot, bytes: bytes(of: snapshot), ledger: ledger)
    #expect(journal.appendedBytes == 0)
    #expect(journal.snapshotBytes > 600_000)
    // A file of 600 KB is compacted once as many bytes were appended again.
    var more = 0
    for round in 0..<20 {
      var changed = entry
      changed.generation = UInt64(round + 2)
      ledger["k0"] = changed
      journal.note("k0", changed)
      guard let save = journal.pendingSave(of: ledger), case .append = save.kind else { break }
      journal.saved(save, bytes: bytes(of: save), ledger: ledger)
      more += 1
    }
    #expect((10...11).contains(more), "about ten appends of 60 KB pass the 600 KB snapshot")
  }
}

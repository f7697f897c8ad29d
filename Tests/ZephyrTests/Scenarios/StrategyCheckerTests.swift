import Foundation
import Testing

@testable import Zephyr

/// The checker of strategy keys checked: histories with a known answer. Each invariant
/// of ``CausalHistory/violations(key:final:strategy:)`` flags a planted bug, and lets the
/// legitimate outcomes pass.
struct StrategyCheckerTests {
  private func items(_ names: String...) -> PropertyListValue { .array(names.map { .string($0) }) }

  private func write(
    _ history: inout CausalHistory, _ id: String, by writer: String, _ value: PropertyListValue?,
    prior: PropertyListValue? = nil, order: Int
  ) {
    history.recordWrite(
      id: id, key: "k", value: value, prior: prior, writer: writer, order: order, account: "default")
  }

  /// A adds x; B, which never saw it, writes y. Losing x is a violation; had B seen x
  /// and removed it, it would not be.
  @Test func aSetLosingAnElementNobodyWhoHadItRemovedIsFlagged() {
    var history = CausalHistory()
    write(&history, "A0", by: "A", items("e:A0:0"), order: 0)
    write(&history, "B1", by: "B", items("e:B1:0"), order: 1)
    #expect(history.violations(key: "k", final: items("e:B1:0"), strategy: .set).map(\.kind) == [.legitimacy])
    #expect(history.violations(key: "k", final: items("e:A0:0", "e:B1:0"), strategy: .set).isEmpty)

    var seen = CausalHistory()
    write(&seen, "A0", by: "A", items("e:A0:0"), order: 0)
    seen.observe("B", writeID: "A0")
    write(&seen, "B1", by: "B", items("e:B1:0"), prior: items("e:A0:0"), order: 1)
    #expect(seen.violations(key: "k", final: items("e:B1:0"), strategy: .set).isEmpty, "B removed x, having it")
  }

  /// A reorder that followed every other write is the final value's order; with a
  /// concurrent write, any order the devices agree on passes.
  @Test(arguments: [ScenarioStrategy.set, .union])
  func aValueWrittenAfterEveryOtherKeepsItsWritersOrder(strategy: ScenarioStrategy) {
    var history = CausalHistory()
    write(&history, "A0", by: "A", items("e:A0:0", "e:A0:1", "e:A0:2"), order: 0)
    history.observe("B", writeID: "A0")
    let reordered = items("e:A0:2", "e:A0:0", "e:A0:1")
    write(&history, "B1", by: "B", reordered, prior: items("e:A0:0", "e:A0:1", "e:A0:2"), order: 1)
    #expect(
      history.violations(key: "k", final: items("e:A0:0", "e:A0:1", "e:A0:2"), strategy: strategy).map(\.kind)
        == [.order])
    #expect(history.violations(key: "k", final: reordered, strategy: strategy).isEmpty)

    write(&history, "C2", by: "C", items("e:C2:0"), order: 2)
    let merged = items("e:A0:0", "e:C2:0", "e:A0:1", "e:A0:2")
    #expect(history.violations(key: "k", final: merged, strategy: strategy).isEmpty, "C2 was concurrent")
  }

  /// A removal made after seeing every addition sticks for `.set` (the element coming
  /// back is a resurrection), and may be undone for `.union`.
  @Test func aSetRemovalSticksAndAUnionOneNeedNot() {
    var history = CausalHistory()
    write(&history, "A0", by: "A", items("e:A0:0"), order: 0)
    history.observe("B", writeID: "A0")
    write(&history, "B1", by: "B", items(), prior: items("e:A0:0"), order: 1)
    #expect(history.violations(key: "k", final: items("e:A0:0"), strategy: .set).map(\.kind) == [.resurrection])
    #expect(history.violations(key: "k", final: items("e:A0:0"), strategy: .union).isEmpty)
    #expect(history.violations(key: "k", final: items(), strategy: .set).isEmpty)
    #expect(
      history.violations(key: "k", final: items("e:Z9:0"), strategy: .union).map(\.kind) == [.inventedValue])
  }

  /// An entry holding a value a later change of that entry replaced is flagged; an
  /// entry changed on two devices concurrently may hold either.
  @Test func aDictionaryEntryReplacedByALaterChangeIsFlagged() {
    var history = CausalHistory()
    let first: PropertyListValue = .dictionary(["a": .string("v:A0:a")])
    write(&history, "A0", by: "A", first, order: 0)
    history.observe("B", writeID: "A0")
    let later: PropertyListValue = .dictionary(["a": .string("v:B1:a")])
    write(&history, "B1", by: "B", later, prior: first, order: 1)
    let concurrent: PropertyListValue = .dictionary(["a": .string("v:C2:a")])
    write(&history, "C2", by: "C", concurrent, order: 2)
    #expect(history.violations(key: "k", final: first, strategy: .dictionary).map(\.kind) == [.legitimacy])
    #expect(history.violations(key: "k", final: later, strategy: .dictionary).isEmpty)
    #expect(history.violations(key: "k", final: concurrent, strategy: .dictionary).isEmpty)
    #expect(
      history.violations(key: "k", final: .dictionary([:]), strategy: .dictionary).map(\.kind) == [.legitimacy],
      "nobody removed the entry")
  }

  /// `.max` must end at the largest of the writes no write follows: a smaller concurrent
  /// value is flagged, a deliberate decrease made after seeing the larger one is not.
  @Test func maxBelowTheLargestConcurrentValueIsFlagged() {
    var history = CausalHistory()
    write(&history, "A0", by: "A", .integer(30), order: 0)
    write(&history, "B1", by: "B", .integer(20), order: 1)
    #expect(history.violations(key: "k", final: .integer(20), strategy: .max).map(\.kind) == [.legitimacy])
    #expect(history.violations(key: "k", final: .integer(30), strategy: .max).isEmpty)
    #expect(history.violations(key: "k", final: .integer(30), strategy: .min).map(\.kind) == [.legitimacy])

    history.observe("B", writeID: "A0")
    write(&history, "B2", by: "B", .integer(5), order: 2)
    #expect(history.violations(key: "k", final: .integer(5), strategy: .max).isEmpty, "B lowered it after seeing 30")
    #expect(history.violations(key: "k", final: .integer(30), strategy: .max).map(\.kind) == [.legitimacy])
  }

  /// Strategy keys are ordered by what each device saw of that key: a write made after
  /// seeing another key's later write is still concurrent with the first key's writes.
  @Test func strategyKeysAreOrderedPerKey() {
    var history = CausalHistory()
    write(&history, "E0", by: "E", .integer(10), order: 0)
    history.recordWrite(id: "E1", key: "other", value: .string("w:E1:x"), writer: "E", order: 1, account: "default")
    history.observe("D", writeID: "E1")
    write(&history, "D2", by: "D", .integer(40), order: 2)
    #expect(history.violations(key: "k", final: .integer(10), strategy: .min).isEmpty, "D never saw E's 10")
    #expect(history.violations(key: "k", final: .integer(10)).map(\.kind) == [.legitimacy], "last-writer-wins: it did")
  }
}

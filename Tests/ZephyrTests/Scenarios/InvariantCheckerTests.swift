import Foundation
import Testing

@testable import Zephyr

/// The checker checked: histories with a known answer, and scenarios in which a stand-in
/// for a broken engine (a record written straight to the server) brings back an
/// overwritten value or a deleted one. A checker that missed these would pass anything.
struct InvariantCheckerTests {
  // MARK: Clocks and histories

  @Test func vectorClocksOrderOnlyWhatHappenedBefore() {
    var a = VectorClock()
    a.tick("A")
    var b = a
    b.tick("B")
    var c = a
    c.tick("C")
    #expect(a.precedes(b) && a.precedes(c))
    #expect(!b.precedes(c) && !c.precedes(b), "concurrent")
    #expect(!a.precedes(a))
    b.merge(c)
    #expect(c.precedes(b))
  }

  @Test func overwrittenValueIsIllegitimateAndAConcurrentOneIsNot() {
    var history = CausalHistory()
    let first = history.recordWrite(
      id: "A0", key: "k", value: .string("w:A0:x"), writer: "A", order: 0, account: "default")
    history.observe("B", writeID: "A0")
    let second = history.recordWrite(
      id: "B1", key: "k", value: .string("w:B1:x"), writer: "B", order: 1, account: "default")
    let concurrent = history.recordWrite(
      id: "C2", key: "k", value: .string("w:C2:x"), writer: "C", order: 2, account: "default")
    #expect(history.violations(key: "k", final: first.value).map(\.kind) == [.legitimacy])
    #expect(history.violations(key: "k", final: second.value).isEmpty)
    #expect(history.violations(key: "k", final: concurrent.value).isEmpty)
    #expect(history.violations(key: "k", final: nil).map(\.kind) == [.legitimacy], "nobody deleted it")
    history.disarm("B1")
    history.disarm("C2")
    #expect(
      history.violations(key: "k", final: first.value).isEmpty,
      "writes held across an account switch overwrite nothing")
  }

  @Test func deleteThatFollowsEveryWriteMustStay() {
    var history = CausalHistory()
    let first = history.recordWrite(
      id: "A0", key: "k", value: .string("w:A0:x"), writer: "A", order: 0, account: "default")
    history.observe("B", writeID: "A0")
    history.recordWrite(id: "B1x", key: "k", value: nil, writer: "B", order: 1, account: "default")
    #expect(history.violations(key: "k", final: first.value).map(\.kind) == [.resurrection])
    #expect(history.violations(key: "k", final: nil).isEmpty)
  }

  @Test func causalityIsTrackedAcrossKeys() {
    var history = CausalHistory()
    let old = history.recordWrite(
      id: "A0", key: "k", value: .string("w:A0:x"), writer: "A", order: 0, account: "default")
    history.recordWrite(id: "A1", key: "other", value: .string("w:A1:x"), writer: "A", order: 1, account: "default")
    history.observe("B", writeID: "A1")
    history.recordWrite(id: "B2", key: "k", value: .string("w:B2:x"), writer: "B", order: 2, account: "default")
    #expect(
      history.violations(key: "k", final: old.value).map(\.kind) == [.legitimacy],
      "B saw A's later write of another key, so B2 follows A0")
  }

  /// Edits one batch numbered (one sync or push) are placed at one point: another
  /// device that saw one of them follows that point, not the others' placement order.
  @Test func editsNumberedByOneBatchAreConcurrent() {
    var history = CausalHistory()
    history.recordWrite(id: "B0", key: "theme", value: .string("w:B0:x"), writer: "B", order: 0, account: "default")
    history.recordWrite(id: "B1", key: "size", value: .string("w:B1:x"), writer: "B", order: 1, account: "default")
    history.recordWrite(id: "C2", key: "theme", value: .string("w:C2:x"), writer: "C", order: 2, account: "default")
    history.placeAtPush(["B0", "B1"])
    let (theme, size) = (history.writes["B0"]?.clock, history.writes["B1"]?.clock)
    #expect(theme == size, "one point for the batch")
    #expect(!(theme ?? VectorClock()).precedes(size ?? VectorClock()))
    // C saw B's size edit, then wrote theme: it follows B's theme edit, numbered with it.
    history.observe("C", writeID: "B1")
    history.placeAtPush(["C2"])
    #expect(history.violations(key: "theme", final: .string("w:B0:x")).map(\.kind) == [.legitimacy])
    #expect(history.violations(key: "theme", final: .string("w:C2:x")).isEmpty)
    // Placed in either order one at a time, B0 and B1 would be ordered: the batch is not.
    history.placeAtPush(["B0", "B1"])
    #expect(history.writes["B0"]?.clock == history.writes["B1"]?.clock)
  }

  /// Seed 4878: the foreign writer stamps nothing, so a device that took its write of one
  /// key has not seen its earlier write of another: an edit of that key is concurrent
  /// with it, not later.
  @Test func foreignWritesOfTwoKeysAreNotOrdered() {
    var history = CausalHistory()
    let first = history.recordWrite(
      id: "F0", key: "size", value: .string("w:F0:x"), writer: CausalHistory.foreignWriter, order: 0,
      account: "default")
    history.observe("C", writeID: "F0")
    history.recordWrite(
      id: "F1", key: "other", value: .string("w:F1:x"), writer: CausalHistory.foreignWriter, order: 1,
      account: "default")
    history.observe("D", writeID: "F1")
    history.recordWrite(id: "D2", key: "size", value: .string("w:D2:x"), writer: "D", order: 2, account: "default")
    #expect(history.violations(key: "size", final: first.value).isEmpty, "concurrent: either may win")
    #expect(history.violations(key: "size", final: .string("w:D2:x")).isEmpty)
    // A device that took F0 itself follows it.
    history.observe("D", writeID: "F0")
    history.recordWrite(id: "D3", key: "size", value: .string("w:D3:x"), writer: "D", order: 3, account: "default")
    #expect(history.violations(key: "size", final: first.value).map(\.kind) == [.legitimacy])
  }

  @Test func foreignWritesOverwriteOnlyOnceTakenAndForeignRemovalsNever() {
    var history = CausalHistory()
    let mine = history.recordWrite(
      id: "A0", key: "k", value: .string("w:A0:x"), writer: "A", order: 0, account: "default")
    history.observe(CausalHistory.foreignWriter, writeID: "A0")
    let foreign = history.recordWrite(
      id: "F1", key: "k", value: .string("w:F1:x"), writer: CausalHistory.foreignWriter, order: 1, account: "default")
    #expect(history.violations(key: "k", final: mine.value).isEmpty, "lost on the server alone")
    history.observe("B", writeID: "F1")
    #expect(history.violations(key: "k", final: mine.value).map(\.kind) == [.legitimacy])
    history.recordWrite(
      id: "F2x", key: "k", value: nil, writer: CausalHistory.foreignWriter, order: 2, account: "default")
    #expect(history.violations(key: "k", final: foreign.value).isEmpty, "absence is not a delete")
    #expect(history.violations(key: "k", final: nil).isEmpty, "but it explains an absence")
  }

  @Test func valueNobodyWroteIsInvented() {
    var history = CausalHistory()
    history.recordWrite(id: "A0", key: "k", value: .string("w:A0:x"), writer: "A", order: 0, account: "default")
    #expect(history.violations(key: "k", final: .string("made up")).map(\.kind) == [.inventedValue])
    #expect(history.violations(key: "k", final: .string("w:A0:y")).map(\.kind) == [.inventedValue])
  }

  // MARK: End to end, against a stand-in for a broken engine

  /// A writes, B takes A's value and then overwrites it (or deletes it); everyone agrees.
  /// Then a record of A's old value at a high generation lands on the server, as an
  /// engine that resurrects would write it.
  private func brokenEngineScenario(bDeletes: Bool) -> Scenario {
    let old = ScenarioRunner.value(id: "A0", seed: 7)
    var steps: [ScenarioStep] = [.set("A", "theme", seed: 7), .sync("A"), .upload("A"), .download("B", notify: true)]
    steps.append(bDeletes ? .remove("B", "theme") : .set("B", "theme", seed: 8))
    steps += [.sync("B"), .upload("B"), .download("A", notify: true), .download("C", notify: true)]
    steps.append(.tamper("theme", .array([.string("z1"), .integer(99), .string("A"), old])))
    return Scenario(seed: 0, devices: ["A", "B", "C"], steps: steps)
  }

  @Test func scenarioWithoutTheBrokenWriteIsClean() {
    for bDeletes in [false, true] {
      var scenario = brokenEngineScenario(bDeletes: bDeletes)
      scenario.steps.removeLast()
      #expect(ScenarioRunner.run(scenario).violations.isEmpty)
    }
  }

  @Test func overwrittenValueBroughtBackIsDetected() {
    let violations = ScenarioRunner.run(brokenEngineScenario(bDeletes: false)).violations
    #expect(violations.map(\.kind) == [.legitimacy], "\(violations)")
  }

  @Test func resurrectedDeleteIsDetected() {
    let violations = ScenarioRunner.run(brokenEngineScenario(bDeletes: true)).violations
    #expect(violations.map(\.kind) == [.resurrection], "\(violations)")
  }

  @Test func inventedValueIsDetected() {
    var scenario = brokenEngineScenario(bDeletes: false)
    scenario.steps[scenario.steps.count - 1] = .tamper(
      "theme", .array([.string("z1"), .integer(99), .string("A"), .string("nobody wrote this")]))
    let kinds = Set(ScenarioRunner.run(scenario).violations.map(\.kind))
    #expect(kinds == [.inventedValue])
  }

  /// One seed in 20 draws 6 to 24 devices; such a scenario runs clean, with its rounds and
  /// two quiet rounds counted, and a break made on purpose at its end is caught.
  @Test func aManyDeviceScenarioIsCheckedAndABreakInItCaught() {
    let seeds = (0..<200).filter { Scenario.hasManyDevices(seed: UInt64($0)) }.map(UInt64.init)
    let sizes = seeds.map { Scenario.generate(seed: $0).devices.count }
    #expect(sizes.allSatisfy { (6...24).contains($0) } && sizes.contains { $0 > 12 }, "\(sizes)")
    #expect(
      (0..<200).filter { !Scenario.hasManyDevices(seed: UInt64($0)) }.allSatisfy {
        (3...6).contains(Scenario.generate(seed: UInt64($0)).devices.count)
      })
    var scenario = Scenario.generate(seed: 7, stepCount: 40, flavor: Scenario.Flavor())
    #expect(scenario.devices.count >= 6)
    let clean = ScenarioRunner.run(scenario)
    #expect(clean.violations.isEmpty, "\(clean.violations)")
    #expect((clean.roundsToConverge ?? .max) <= scenario.devices.count + 1)
    // Every write landed, then a record nobody wrote.
    scenario.steps += scenario.devices.flatMap { [ScenarioStep.sync($0), .upload($0)] }
    scenario.steps.append(
      .tamper("theme", .array([.string("z1"), .integer(1 << 30), .string("A"), .string("nobody wrote this")])))
    let kinds = Set(ScenarioRunner.run(scenario).violations.map(\.kind))
    #expect(kinds == [.inventedValue], "\(kinds)")
  }

  /// Scenarios with strategy keys draw values of the wrong type written to the store under
  /// them, each followed by an edit that replaces it. While the store holds one, the
  /// devices agree among themselves and name the key in their status; a device that took
  /// it would hold a value nobody wrote.
  @Test func wrongTypeStoreValuesAreDrawnAndChecked() {
    let drawn = (0..<500).filter { seed in
      Scenario.generate(seed: UInt64(seed)).steps.contains { if case .wrongTypeInStore = $0 { true } else { false } }
    }
    #expect(drawn.count >= 20, "\(drawn.count) of 500 seeds")
    let agreed: [ScenarioStep] = [
      .set("A", "k2", seed: 1), .sync("A"), .upload("A"), .download("B", notify: true), .wrongTypeInStore("k2"),
    ]
    let blocked = ScenarioRunner.run(Scenario(seed: 0, devices: ["A", "B"], steps: agreed, strategies: ["k2": .set]))
    #expect(blocked.violations.isEmpty, "\(blocked.violations)")
    // The next edit replaces it.
    let edited = ScenarioRunner.run(
      Scenario(seed: 0, devices: ["A", "B"], steps: agreed + [.set("B", "k2", seed: 2)], strategies: ["k2": .set]))
    #expect(edited.violations.isEmpty, "\(edited.violations)")
    // Blocked before B saw A's edit, with no edit after it: the devices disagree, which
    // the checker reports (the generator follows each such value with an edit).
    let apart = ScenarioRunner.run(
      Scenario(
        seed: 0, devices: ["A", "B"],
        steps: [.set("A", "k2", seed: 1), .sync("A"), .upload("A"), .wrongTypeInStore("k2")],
        strategies: ["k2": .set]))
    #expect(apart.violations.map(\.kind) == [.convergence], "\(apart.violations)")
  }

  /// Once the tombstone lifetime passed, a delete may be undone by a device that never saw
  /// it and still holds a value (its tombstone may be collected before that device
  /// syncs); a delete every holder saw keeps its guarantee.
  @Test func aCollectedDeleteMayBeUndoneOnlyByADeviceThatMissedIt() {
    var history = CausalHistory()
    let old = history.recordWrite(
      id: "A0", key: "k", value: .string("w:A0:x"), writer: "A", order: 0, account: "default")
    history.observe("B", writeID: "A0")
    history.observe("C", writeID: "A0")
    history.recordWrite(id: "B1x", key: "k", value: nil, writer: "B", order: 1, account: "default")
    history.observe("A", writeID: "B1x")
    history.tombstonesExpired(holding: [(device: "A", key: "k", account: "default")])
    #expect(history.violations(key: "k", final: old.value).map(\.kind) == [.resurrection], "A saw the delete")
    history.tombstonesExpired(holding: [(device: "C", key: "k", account: "work")])
    #expect(history.violations(key: "k", final: old.value).map(\.kind) == [.resurrection], "another account's")
    history.tombstonesExpired(holding: [(device: "C", key: "k", account: "default")])
    #expect(history.violations(key: "k", final: old.value).isEmpty, "C missed it and holds A0")
    #expect(history.violations(key: "k", final: nil).isEmpty)
  }

  /// Scenarios draw time passing beyond the tombstone lifetime, and their devices collect
  /// tombstones: of a last-writer-wins key and of a strategy key's deleted record. A
  /// device that missed the delete brings the value back (the documented limit), and
  /// the checker accepts it; devices that saw it never do.
  @Test func collectedDeletionsAreDrawnAndChecked() {
    let drawn = (0..<500).filter { seed in Scenario.generate(seed: UInt64(seed)).steps.contains(.passTime) }
    #expect(drawn.count >= 40, "\(drawn.count) of 500 seeds")
    for (key, strategies) in [("theme", [String: ScenarioStrategy]()), ("k2", ["k2": .set])] {
      let deleted: [ScenarioStep] = [
        .set("A", key, seed: 1), .sync("A"), .upload("A"), .download("B", notify: true),
        .download("C", notify: true), .remove("B", key), .sync("B"), .upload("B"), .download("A", notify: true),
      ]
      // C never saw the delete: once A collected its tombstone, C uploads A's value again.
      let missed = ScenarioRunner.run(
        Scenario(
          seed: 0, devices: ["A", "B", "C"], steps: deleted + [.passTime, .sync("A"), .upload("A")],
          strategies: strategies), verbose: true)
      #expect(missed.violations.isEmpty, "\(key): \(missed.violations)")
      #expect(missed.transcript.contains { $0.contains("collect tombstone \(key)") }, "\(key)")
      // C saw it: the value stays deleted.
      let seen = ScenarioRunner.run(
        Scenario(
          seed: 0, devices: ["A", "B", "C"],
          steps: deleted + [.download("C", notify: true), .passTime, .sync("A"), .upload("A")],
          strategies: strategies), verbose: true)
      #expect(seen.violations.isEmpty, "\(key): \(seen.violations)")
      #expect(seen.transcript.contains { $0.contains("collect tombstone \(key)") }, "\(key)")
    }
  }

  @Test func shrinkerKeepsTheStepsThatMatter() {
    var scenario = brokenEngineScenario(bDeletes: true)
    scenario.steps.insert(
      contentsOf: [.sync("C"), .upload("C"), .restart("A"), .event("B", keys: nil, initialSync: false)], at: 4)
    let shrunk = ScenarioShrinker.shrink(scenario) { candidate in
      ScenarioRunner.run(candidate).violations.contains { $0.kind == .resurrection }
    }
    #expect(shrunk.steps.count < scenario.steps.count)
    #expect(shrunk.steps.contains(.remove("B", "theme")))
    #expect(ScenarioRunner.run(shrunk).violations.contains { $0.kind == .resurrection })
  }

  /// Seed 1905, a false alarm of an earlier checker: A saw B's value in another account,
  /// deleted it, came back with no history for the key and edited it. To the engine that
  /// edit is a never-synced value, which B's record (uploaded when B came back) beats
  /// ("cloud history beats a never-synced device"), so losing it is no violation.
  @Test func editWithoutHistoryAfterAnAccountSwitchMayLoseToTheCloud() {
    let scenario = Scenario(
      seed: 1905, devices: ["A", "B"],
      steps: [
        .switchAccount("B", to: "work"),
        .switchAccount("A", to: "work"),
        .set("B", "k2", seed: 409865),
        .sync("B"),
        .upload("B"),
        .download("A", notify: true),
        .remove("A", "k2"),
        .switchAccount("A", to: "default"),
        .set("A", "k2", seed: 41520),
      ])
    #expect(ScenarioRunner.run(scenario).violations.isEmpty)
  }

  /// Seed 1004421, another false alarm of an earlier checker: A's value from the work
  /// account comes back to the default account when B, who holds it, changes accounts
  /// (local-only keys are uploaded). That upload is a new write B makes, which A's
  /// delete did not follow, so the inbound conflict may take it.
  @Test func valueBroughtBackByAnAccountChangeIsANewWrite() {
    let scenario = Scenario(
      seed: 1_004_421, devices: ["A", "B"],
      steps: [
        .switchAccount("A", to: "work"),
        .set("A", "k2", seed: 782893),
        .switchAccount("B", to: "work"),
        .sync("A"),
        .set("A", "k2", seed: 639103),
        .upload("A"),
        .set("B", "k2", seed: 712962),
        .download("B", notify: true),
        .switchAccount("A", to: "default"),
        .remove("A", "k2"),
      ])
    #expect(ScenarioRunner.run(scenario).violations.isEmpty)
  }

  /// Seed 2025901, a third false alarm: C's C7 reached the server, then a stale
  /// republish of C0 from D overwrote it there. Only C, which had seen nothing but its own
  /// C7 replaced by a newer local edit, could have pushed it again, and C then changed
  /// accounts, which resets its ledger and drops the edit: nobody defends C7 any more.
  @Test func writeOnlyItsWriterHeldMayBeLostToAnAccountChange() {
    let scenario = Scenario(
      seed: 2_025_901, devices: ["A", "C", "D"],
      steps: [
        .set("C", "com.example.size", seed: 986916),
        .notify("C"),
        .set("A", "com.example.size", seed: 368655),
        .upload("C"),
        .sync("A"),
        .download("D", notify: true),
        .upload("A"),
        .set("C", "com.example.size", seed: 851317),
        .download("D", notify: false),
        .download("C", notify: true),
        .set("C", "com.example.size", seed: 258492),
        .upload("C"),
        .sync("D"),
        .switchAccount("C", to: "work"),
        .upload("D"),
      ])
    #expect(ScenarioRunner.run(scenario).violations.isEmpty)
  }

  /// Seed 3017413: an account change (here a sign-in again to the same account) resets
  /// the ledger. D then takes A1 from the store over its own D0, which it no longer
  /// knows it wrote, and edits on top of A1; the edit loses a conflict to C2, and D0, the
  /// highest of the g1 records, comes back. To the engine D's edit followed A1 only.
  @Test func accountChangeForgetsWhatTheDeviceHadSeen() {
    let scenario = Scenario(
      seed: 3_017_413, devices: ["A", "C", "D", "E"],
      steps: [
        .set("D", "ünï", seed: 801766),
        .set("A", "ünï", seed: 736423),
        .set("C", "ünï", seed: 73148),
        .syncKeys("C", ["theme", "k2", "ünï"]),
        .sync("D"),
        .upload("D"),
        .event("A", keys: nil, initialSync: true),
        .download("E", notify: true),
        .upload("A"),
        .switchAccount("D", to: "default"),
        .set("D", "ünï", seed: 309615),
      ])
    #expect(ScenarioRunner.run(scenario).violations.isEmpty)
  }

  @Test func sameSeedReplaysTheSameScenario() {
    #expect(Scenario.generate(seed: 42).steps == Scenario.generate(seed: 42).steps)
    #expect(Scenario.generate(seed: 42).steps != Scenario.generate(seed: 43).steps)
    let first = ScenarioRunner.run(Scenario.generate(seed: 42))
    let second = ScenarioRunner.run(Scenario.generate(seed: 42))
    #expect(first.violations == second.violations)
    #expect(first.roundsToConverge == second.roundsToConverge)
  }
}

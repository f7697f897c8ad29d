import Foundation
import Testing

@testable import Zephyr

/// Crash points (issue 5): an operation that pushes, pulls, deletes and resolves a
/// conflict is stopped before its 1st, 2nd, … write (store, `UserDefaults` or ledger),
/// the device relaunches, and rounds run. Every run is checked like a random scenario
/// (``ScenarioRunner``): no value lost (the last local edit before the crash wins, or a
/// concurrent write legitimately does), agreement within three rounds, and then three
/// more rounds that write and change nothing (no flip-flop).
struct CrashPointTests {
  static let operations: [ScenarioStep.Operation] = [
    .sync, .syncKeys(keys), .download(notify: true), .notify,
  ]

  static let keys = Scenario.keys + ["fresh"]

  /// What the app does on the relaunched device before anything syncs.
  enum AfterRestart: Sendable, CaseIterable, CustomTestStringConvertible {
    case nothing, editEveryKey, deleteEveryKey

    var testDescription: String { "\(self)" }
  }

  /// A and B share history for every key but `fresh`; then B changes `com.example.size`,
  /// deletes `n`, edits `ünï` and writes `fresh` (new to A), and A edits `theme`, deletes
  /// `k2` and edits `ünï` too (a conflict). A has B's changes in its store cache (silently
  /// downloaded) unless `operation` is the download that brings them. Once relaunched, A
  /// does `then` before anything syncs: deleting every key puts `fresh` back to what A
  /// held before it pulled it.

  static func scenario(crashing operation: ScenarioStep.Operation, before: Int, then: AfterRestart) -> Scenario {
    var steps: [ScenarioStep] = Scenario.keys.enumerated().map { .set("A", $1, seed: UInt64(10 + $0)) }
    steps += [.sync("A"), .upload("A"), .download("B", notify: true), .download("C", notify: true)]
    steps += [
      .set("B", "com.example.size", seed: 21), .remove("B", "n"), .set("B", "ünï", seed: 22),
      .set("B", "fresh", seed: 23), .sync("B"), .upload("B"),
      .set("A", "theme", seed: 31), .remove("A", "k2"), .set("A", "ünï", seed: 32),
    ]
    if operation != .download(notify: true) { steps.append(.download("A", notify: false)) }
    steps.append(.crash("A", before: before, during: operation))
    switch then {
    case .nothing: break
    case .editEveryKey: steps += keys.enumerated().map { .set("A", $1, seed: UInt64(40 + $0)) }
    case .deleteEveryKey: steps += keys.map { .remove("A", $0) }
    }
    return Scenario(seed: 0, devices: ["A", "B", "C"], keys: keys, steps: steps)
  }

  /// The world each operation is crashed in. A hand-posted `didChangeNotification`
  /// (`.notify`) finds edits to push only in the Linux-plain world: in Apple's, each edit
  /// announced itself and was pushed as it was made.
  static func world(for operation: ScenarioStep.Operation) -> World {
    operation == .notify ? .linuxPlain : .apple
  }

  /// How many writes `operation` makes in this scenario when nothing crashes.
  static func writeCount(of operation: ScenarioStep.Operation) -> Int {
    let dryRun = scenario(crashing: operation, before: .max, then: .nothing)
    return ScenarioRunner.run(dryRun, world: world(for: operation)).crashWritePoints.last ?? 0
  }

  @Test(arguments: operations)
  func operationHasWritesToCrashBetween(_ operation: ScenarioStep.Operation) {
    #expect(Self.writeCount(of: operation) >= 3, "a store write, a defaults write and the ledger at least")
  }

  @Test(arguments: operations, AfterRestart.allCases)
  func crashBeforeAnyWriteLosesNothingAndConverges(_ operation: ScenarioStep.Operation, then: AfterRestart) {
    let writes = Self.writeCount(of: operation)
    for before in 1...max(writes, 1) {
      let scenario = Self.scenario(crashing: operation, before: before, then: then)
      let outcome = ScenarioCheck.run(scenario, extraRounds: 3, world: Self.world(for: operation))
      #expect(outcome.crashesStruck == 1)
    }
  }

  /// Releasing a coordinator stops its observers (an app relaunch is a new coordinator
  /// over the same suite and store): a released coordinator stops observing at once,
  /// even while its change notification still waits on the main queue (held here so that
  /// the window is certain). A coordinator that outlived its relaunch would react to the
  /// next `didChangeNotification` with its stale ledger.
  @Test func relaunchReleasesTheOldCoordinatorAtOnce() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    b.set(.string("dusk"), "theme")
    b.coordinator.sync()
    harness.cloud.upload()

    let gate = DispatchSemaphore(value: 0)
    DispatchQueue.main.async { gate.wait() }
    harness.cloud.download(to: "A")  // a pull: its notification waits behind the gate
    weak let released = a.coordinator
    a.restart()
    let alive = released != nil
    gate.signal()
    ScenarioRunner.drainMainQueue()
    #expect(!alive, "the released coordinator is still alive and observing")
    #expect(a.value("theme") == .string("dusk"))
  }
}

extension ScenarioStep.Operation: CustomTestStringConvertible {
  var testDescription: String { description }
}

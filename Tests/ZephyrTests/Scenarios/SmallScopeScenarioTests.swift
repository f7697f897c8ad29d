import Testing

@testable import Zephyr

/// Every short history of one key on two devices, run through the scenario checker: the
/// small scope where a collected deletion, a value of the wrong type in the store and a
/// returning device meet, exhaustively rather than by chance. Each history is a sequence
/// of ``moves`` (an edit or removal with its push, a download, other code's write, time
/// passing beyond the tombstone lifetime); the checker then runs its rounds and asserts
/// convergence, legitimacy, no resurrection and quiet, as for the random draw, over the
/// key-value store and CloudKit.
struct SmallScopeScenarioTests {
  /// One thing that happens to the key, as the steps that make it.
  struct Move: CustomStringConvertible {
    var name: String
    var steps: [ScenarioStep]
    var description: String { name }
  }

  static func moves(key: String, collection: Bool) -> [Move] {
    var moves = [
      Move(name: "A edits", steps: [.set("A", key, seed: 11), .sync("A"), .upload("A")]),
      Move(name: "B edits", steps: [.set("B", key, seed: 23), .sync("B"), .upload("B")]),
      Move(name: "A removes", steps: [.remove("A", key), .sync("A"), .upload("A")]),
      Move(name: "B removes", steps: [.remove("B", key), .sync("B"), .upload("B")]),
      Move(name: "A downloads", steps: [.download("A", notify: true)]),
      Move(name: "B downloads", steps: [.download("B", notify: true)]),
      Move(name: "time passes", steps: [.passTime]),
    ]
    if collection {
      // A value of the wrong type, then the edit that replaces it (as the draw has it).
      moves.append(
        Move(
          name: "wrong type, A edits",
          steps: [.wrongTypeInStore(key), .set("A", key, seed: 37), .sync("A"), .upload("A")]))
    }
    return moves
  }

  /// Every sequence of `length` moves.
  static func histories(of moves: [Move], length: Int) -> [[Move]] {
    (0..<length).reduce([[]]) { histories, _ in histories.flatMap { history in moves.map { history + [$0] } } }
  }

  static let length = 3

  @Test(arguments: [nil, ScenarioStrategy.set, .union, .dictionary], [Backend.keyValue, .cloudKit])
  func everyShortHistoryOfOneKeyConvergesOnALegitimateState(strategy: ScenarioStrategy?, backend: Backend) {
    let key = strategy == nil ? "theme" : "k2"
    let moves = Self.moves(key: key, collection: strategy != nil)
    var failures: [String] = []
    var collections = 0
    let histories = Self.histories(of: moves, length: Self.length)
    for history in histories {
      let scenario = Scenario(
        seed: 0, devices: ["A", "B"], keys: [key], steps: history.flatMap(\.steps),
        strategies: strategy.map { [key: $0] } ?? [:])
      // (The decision log, read to count collections, is kept where it is cheap.)
      let outcome = ScenarioRunner.run(scenario, verbose: backend == .keyValue, backend: backend)
      if outcome.transcript.contains(where: { $0.contains("collect tombstone") }) { collections += 1 }
      if !outcome.violations.isEmpty { failures.append("\(history): \(outcome.violations)") }
    }
    #expect(failures.isEmpty, "\(failures.count) of \(histories.count): \(failures.prefix(3))")
    // The scope reaches what it is for: tombstones collected in some histories.
    #expect(backend == .cloudKit || collections > 0)
  }
}

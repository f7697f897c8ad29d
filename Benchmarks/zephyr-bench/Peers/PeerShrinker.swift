import Foundation

/// Shrinks a scenario on which this engine loses a write or brings a delete back: drops
/// one step at a time while the finding stays, until no single step can go.
///
///     swift run -c release zephyr-bench peers shrink 36
enum PeerShrinker {
  static func shrink(seed: UInt64) -> String {
    var scenario = PeerScenario.generate(seed: seed)
    guard fails(scenario) else { return "seed \(seed): this engine loses no write and brings no delete back" }
    var shrunk = true
    while shrunk {
      shrunk = false
      // One step at a time, then a device's connection toggles two at a time (one alone
      // would leave the device offline).
      let candidates = (0..<scenario.steps.count).reversed().map { [$0] } + togglePairs(scenario)
      for indices in candidates where indices.allSatisfy({ $0 < scenario.steps.count }) {
        var candidate = scenario
        for index in indices.sorted(by: >) { candidate.steps.remove(at: index) }
        if fails(candidate) {
          scenario = candidate
          shrunk = true
          break
        }
      }
    }
    return PeerComparison.explain(scenario, designs: [.this])
  }

  private static func togglePairs(_ scenario: PeerScenario) -> [[Int]] {
    let toggles = scenario.steps.indices.filter {
      if case .toggleOnline = scenario.steps[$0] { true } else { false }
    }
    return toggles.flatMap { first in
      toggles.filter { $0 > first && scenario.steps[$0] == scenario.steps[first] }.map { [first, $0] }
    }
  }

  private static func fails(_ scenario: PeerScenario) -> Bool {
    let tally = PeerRun(scenario, design: .this).run()
    return tally.lostWrites > 0 || tally.resurrectedDeletes > 0
  }
}

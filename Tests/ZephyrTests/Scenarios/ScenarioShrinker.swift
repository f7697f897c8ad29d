import Foundation

/// Delta debugging (ddmin) over a scenario's steps: the smallest list of steps found that
/// still breaks the same invariant, replayed from scratch each time.
enum ScenarioShrinker {
  /// Shrinks `scenario` while `fails` holds, within `budget` replays.
  static func shrink(_ scenario: Scenario, budget: Int = 4_000, fails: (Scenario) -> Bool) -> Scenario {
    var current = scenario
    var replays = 0
    func attempt(_ candidate: Scenario) -> Bool {
      guard replays < budget else { return false }
      replays += 1
      return fails(candidate)
    }

    var granularity = 2
    while current.steps.count >= 2, replays < budget {
      let steps = current.steps
      let chunk = (steps.count + granularity - 1) / granularity
      var reduced = false
      for start in stride(from: 0, to: steps.count, by: chunk) {
        var candidate = current
        candidate.steps.removeSubrange(start..<min(start + chunk, steps.count))
        if attempt(candidate) {
          current = candidate
          granularity = max(granularity - 1, 2)
          reduced = true
          break
        }
      }
      if !reduced {
        if granularity >= steps.count { break }
        granularity = min(granularity * 2, steps.count)
      }
    }
    // Devices that no step names any more may go too (they still take part in rounds).
    for name in current.devices.reversed() where current.devices.count > 1 {
      guard !current.steps.contains(where: { $0.device == name }) else { continue }
      var candidate = current
      candidate.devices.removeAll { $0 == name }
      if attempt(candidate) { current = candidate }
    }
    return current
  }

  /// The failure report: seed, violations, and the shrunk steps as Swift source.
  static func report(original: Scenario, outcome: ScenarioOutcome, shrunk: Scenario, shrunkOutcome: ScenarioOutcome)
    -> String
  {
    """
    Scenario seed \(original.seed) (\(original.devices.count) devices, \(original.steps.count) steps) broke:
    \(outcome.violations.map { "  - \($0)" }.joined(separator: "\n"))
    Shrunk to \(shrunk.steps.count) steps, which break:
    \(shrunkOutcome.violations.map { "  - \($0)" }.joined(separator: "\n"))
    \(shrunk)
    Transcript of the shrunk scenario:
    \(shrunkOutcome.transcript.joined(separator: "\n"))
    """
  }
}

import Foundation
import Testing

/// Runs scenarios and turns their violations into test issues: the seed, the violations
/// and a shrunk step list with its decision log; violations that open engine bugs explain
/// are recorded as known issues.
enum ScenarioCheck {
  /// Runs `scenario` and reports any violation.
  @discardableResult
  static func run(
    _ scenario: Scenario, extraRounds: Int = 1, world: World = .apple, backend: Backend = .keyValue,
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> ScenarioOutcome {
    let outcome = ScenarioRunner.run(scenario, extraRounds: extraRounds, world: world, backend: backend)
    report(
      scenario, outcome, extraRounds: extraRounds, world: world, backend: backend, sourceLocation: sourceLocation)
    return outcome
  }

  /// Records `outcome`'s violations, if any, after shrinking `scenario`.
  static func report(
    _ scenario: Scenario, _ outcome: ScenarioOutcome, extraRounds: Int = 1, world: World = .apple,
    backend: Backend = .keyValue, sourceLocation: SourceLocation
  ) {
    guard let kind = outcome.violations.first?.kind else { return }
    // A new bug must not shrink into a known one.
    let new = KnownEngineBug.explaining(outcome) == nil
    let shrunk = ScenarioShrinker.shrink(scenario) { candidate in
      let replay = ScenarioRunner.run(candidate, extraRounds: extraRounds, world: world, backend: backend)
      return replay.violations.contains { $0.kind == kind } && (!new || KnownEngineBug.explaining(replay) == nil)
    }
    let shrunkOutcome = ScenarioRunner.run(
      shrunk, verbose: true, extraRounds: extraRounds, world: world, backend: backend)
    let text =
      "store: \(backend)\n"
      + ScenarioShrinker.report(
        original: scenario, outcome: outcome, shrunk: shrunk, shrunkOutcome: shrunkOutcome)
    // A shrunk scenario that passes when replayed once more (the store thread's timing)
    // is classified by the violations of the run that failed.
    if let known = KnownEngineBug.explaining(shrunkOutcome.violations.isEmpty ? outcome : shrunkOutcome) {
      withKnownIssue("open engine bug: \(known.joined(separator: "; "))", isIntermittent: true) {
        Issue.record(Comment(rawValue: text), sourceLocation: sourceLocation)
      }
    } else {
      Issue.record(Comment(rawValue: text), sourceLocation: sourceLocation)
    }
  }

  /// For a regression test of an open bug: the scenario still breaks an invariant.
  /// Recorded as a known issue while the bug is open; once it is fixed, the known issue
  /// no longer occurs and the test fails, as a reminder to drop the `withKnownIssue`.
  static func replay(
    _ scenario: Scenario, extraRounds: Int = 1, world: World = .apple, backend: Backend = .keyValue
  ) -> [Violation] {
    ScenarioRunner.run(scenario, extraRounds: extraRounds, world: world, backend: backend).violations
  }
}

import Foundation
import Testing

/// An engine bug the scenarios found that is not fixed yet.
///
/// A random scenario whose shrunk violations all match open bugs is recorded as a known
/// issue, so the suite stays green while the fix is pending and still fails on anything
/// new. Each bug also has a named regression test with its shrunk scenario. When a bug is
/// fixed, delete its entry here and the `withKnownIssue` around its regression test.
struct KnownEngineBug: Sendable {
  var name: String
  /// Whether a violation of a key with these facts may be this bug.
  var matches: @Sendable (Violation, KeyFacts) -> Bool

  /// The open bugs: none. (The last, "a stale record outranks an agreed foreign value",
  /// seed 102552, was fixed by naming the foreign value in the records made over it:
  /// see ``ForeignName`` and `ScenarioRegressionTests.aStaleRecordDoesNotOutrankAnAgreedForeignValue`.)
  static let open: [KnownEngineBug] = []

  /// The open bugs that explain every violation of `outcome`, or `nil` when one is new.
  static func explaining(_ outcome: ScenarioOutcome) -> [String]? {
    // An outcome with no violation is explained by no bug.
    guard !outcome.violations.isEmpty else { return nil }
    var names: [String] = []
    for violation in outcome.violations {
      let facts = violation.key.flatMap { outcome.facts[$0] } ?? KeyFacts()
      guard let bug = open.first(where: { $0.matches(violation, facts) }) else { return nil }
      if !names.contains(bug.name) { names.append(bug.name) }
    }
    return names
  }
}

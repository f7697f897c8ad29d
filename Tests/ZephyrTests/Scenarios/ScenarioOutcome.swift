import Foundation

/// What running one scenario showed.
struct ScenarioOutcome: Sendable {
  var violations: [Violation] = []
  /// Rounds of "deliver; every device syncs; deliver" until every device and the server
  /// agreed; `nil` when they still disagreed after ``ScenarioRunner/maximumRounds``.
  var roundsToConverge: Int?
  /// Local edits an inbound event replaced before they were pushed (the documented
  /// "inbound prefers remote" policy): they overwrite nothing.
  var overwrittenBeforePush = 0
  /// Crash steps whose crash actually struck (the operation made enough writes).
  var crashesStruck = 0
  /// Per crash step, how many writes its operation attempted, the crashing one included.
  var crashWritePoints: [Int] = []
  /// Steps and decision logs, when run verbosely.
  var transcript: [String] = []
  /// What happened to each key, to tell a known engine bug (see ``KnownEngineBug``).
  var facts: [String: KeyFacts] = [:]
}

/// Circumstances of one key's history that known engine bugs need.
struct KeyFacts: Sendable, Equatable {
  /// A foreign writer wrote or removed the key's server value.
  var foreignWrite = false
  /// A crash struck after an operation wrote the key into `UserDefaults` and before it
  /// saved the ledger that settles the write: a pull written ahead is left pending.
  var crashLeftPullPending = false
}

import Foundation

/// The `peers` part of the report: every design on the same seeded scenarios.
///
///     swift run -c release zephyr-bench peers                # this part only
///     swift run -c release zephyr-bench peers 2000           # more scenarios
///     swift run -c release zephyr-bench peers explain 17     # one seed, step by step
///     swift run -c release zephyr-bench peers shrink 36      # this engine's finding, minimal
///
/// Metrics, summed over the scenarios:
/// - `lost_writes`: keys whose final value (on any device) is a write that a causally
///   later write superseded, where that later write was pushed (the server held it) and
///   not itself replaced on its device before its push. Causality is a vector clock per
///   device across all keys (see ``PeerHistory``).
/// - `overwritten_before_push`: edits and deletes that something other than their own
///   device's next edit (an inbound event, a sync, a relaunch) replaced on their device
///   before the server held them: the documented "an inbound event prefers remote" policy
///   and its relatives, counted apart and never as lost.
/// - `resurrected_deletes`: keys that end with a value although a delete of them causally
///   follows every other write of the key.
/// - `not_converged`: scenarios whose devices still disagree after six rounds.
/// - `store_writes_per_edit`, `bytes_per_edit`, `synchronize_calls_per_edit`: store
///   `setValue`/`removeValue` calls, their bytes (key + binary-plist value) and
///   `synchronize()` calls on all devices over the whole scenario, final rounds included,
///   per edit or delete made.
/// - `extra_store_keys`: the most store keys a scenario ended with beyond the synced ones.
enum PeerComparison {
  static let scenarios = 300

  static func run(scenarios count: Int = scenarios) -> [[String: Any]] {
    PeerDesign.allCases.map { design in
      var total = PeerTally()
      for seed in 1...UInt64(count) {
        total = total + PeerRun(PeerScenario.generate(seed: seed), design: design).run()
      }
      return report(design, total, scenarios: count)
    }
  }

  static func report(_ design: PeerDesign, _ total: PeerTally, scenarios: Int) -> [String: Any] {
    func perEdit(_ amount: Int) -> Double {
      total.edits > 0 ? (Double(amount) / Double(total.edits) * 100).rounded() / 100 : 0
    }
    return [
      "design": design.rawValue, "scenarios": scenarios, "edits": total.edits,
      "lost_writes": total.lostWrites, "overwritten_before_push": total.overwrittenBeforePush,
      "resurrected_deletes": total.resurrectedDeletes, "not_converged": total.notConverged,
      "store_writes_per_edit": perEdit(total.storeWrites), "bytes_per_edit": perEdit(total.bytes),
      "synchronize_calls_per_edit": perEdit(total.synchronizeCalls), "extra_store_keys": total.extraStoreKeys,
    ]
  }

  /// A scenario on the given designs, with the steps, what each device held after each
  /// step (the write ids, `-` for none) and the findings; for a bug report.
  static func explain(_ scenario: PeerScenario, designs: [PeerDesign] = PeerDesign.allCases) -> String {
    var lines = ["\(scenario)"]
    for design in designs {
      let run = PeerRun(scenario, design: design, verbose: true)
      let tally = run.run()
      lines.append("== \(design.rawValue)")
      lines += run.transcript
      lines += tally.findings.isEmpty ? ["no findings"] : tally.findings
    }
    return lines.joined(separator: "\n")
  }

  /// Handles `zephyr-bench peers [explain <seed>]`; returns `false` for other arguments.
  static func handle(_ arguments: [String]) -> Bool {
    guard arguments.first == "peers" else { return false }
    if arguments.count >= 3, let seed = UInt64(arguments[2]) {
      switch arguments[1] {
      case "explain": print(explain(PeerScenario.generate(seed: seed)))
      case "shrink": print(PeerShrinker.shrink(seed: seed))
      default: return false
      }
      return true
    }
    let count = arguments.dropFirst().first.flatMap { Int($0) }.map { max($0, 1) } ?? scenarios
    let report: [String: Any] = ["command": "swift run -c release zephyr-bench peers", "peers": run(scenarios: count)]
    if let json = try? JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys]) {
      print(String(decoding: json, as: UTF8.self))
    }
    return true
  }
}

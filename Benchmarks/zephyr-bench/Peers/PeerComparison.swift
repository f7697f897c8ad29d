import Foundation

/// The `peers` part of the report: every design on the same seeded scenarios.
///
///     swift run -c release zephyr-bench peers                # this part only
///     swift run -c release zephyr-bench peers 2000           # more scenarios
///     swift run -c release zephyr-bench peers markdown       # the two comparison tables
///     swift run -c release zephyr-bench peers explain 17     # one seed, step by step
///     swift run -c release zephyr-bench peers shrink 36      # this engine's finding, minimal
///
/// Metrics, summed over the scenarios. Where every edit went (each edit or delete step
/// in exactly one, so they add up to `edits`; see ``PeerTally``):
/// - `edits`: edit and delete steps issued, the same steps for every design.
/// - `edits_pushed`: the server held the write before anything replaced it on its device.
/// - `edits_superseded_by_own_edit`: its device's next write of the key came first.
/// - `removals_of_absent_keys`: delete steps on a device that held no value (a no-op).
/// - `overwritten_before_push`: replaced on its device, before the server held it, by an
///   inbound store event (a download's, a late or duplicate one, or the final rounds'):
///   the measure, the documented "an inbound event prefers remote" policy.
/// - `yielded_to_cloud_history`: replaced before its push, in a step where no event was
///   handed to its device, by that device's own push or sync taking the value its store
///   copy held. For this engine every one is the merge rule "no history, present | another
///   value in a Zephyr record | pull: cloud history beats a never-synced device"
///   (Sources/Zephyr/Zephyr.docc/MergeSemantics.md): the device had no ledger
///   history for the key and its store copy held another device's record (downloaded,
///   its event dropped or late); `peers explain <seed>` shows the engine's decision. The
///   rule is deliberate: a first-launch default written by app code (a setting an app
///   update adds) must not overwrite the value the person chose on other devices, and
///   Zephyr cannot tell such a write from a user's edit.
/// - `replaced_at_relaunch`: replaced before its push by a relaunch.
/// - `edits_never_pushed`: never reached the server and never replaced: the design never
///   sent it. A design that refuses to push shows here, not as fewer lost writes.
/// - `…_causally_later` (`overwritten_`, `yielded_`, `replaced_at_relaunch_`): of those,
///   the replacing value was a write that causally precedes the replaced one (the device
///   went back to a state its user had seen superseded); a replacement by absence names
///   no write and is not counted.
///
/// Outcomes:
/// - `lost_writes`: keys whose final value (on any device) is a write that a causally
///   later write superseded, where that later write was pushed (the server held it) and
///   not itself replaced on its device before its push. Causality is a vector clock per
///   device across all keys (see ``PeerHistory``). Only a pushed write supersedes: an
///   edit a design never pushed, or gave up, is in the fates above instead.
/// - `lost_writes_converged`: the same, in scenarios whose devices agreed at the end (a
///   scenario that did not converge is charged in `not_converged` too).
/// - `resurrected_deletes`: keys that end with a value although a delete of them causally
///   follows every other write of the key (and was not replaced before its push).
/// - `not_converged`: scenarios whose devices still disagree after six rounds.
/// - `store_writes_per_edit`, `bytes_per_edit`, `synchronize_calls_per_edit`: store
///   `setValue`/`removeValue` calls, their bytes (key + binary-plist value) and
///   `synchronize()` calls on all devices over the whole scenario, final rounds included,
///   per edit or delete step.
/// - `extra_store_keys`: the most store keys a scenario ended with beyond the synced ones.
enum PeerComparison {
  static let scenarios = 300

  /// What `zephyr-bench peers` prints.
  struct Report: Codable {
    var command: String
    var peers: [PeerReport]
  }

  static func run(scenarios count: Int = scenarios) -> [PeerReport] {
    PeerDesign.allCases.map { design in
      var total = PeerTally()
      for seed in 1...UInt64(count) {
        total = total + PeerRun(PeerScenario.generate(seed: seed), design: design).run()
      }
      return PeerReport(design: design, total: total, scenarios: count)
    }
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

  /// Handles `zephyr-bench peers [count]`, `peers markdown [count]`, `peers explain <seed>`
  /// and `peers shrink <seed>`; returns `false` for other arguments.
  static func handle(_ arguments: [String]) -> Bool {
    guard arguments.first == "peers" else { return false }
    let mode = arguments.dropFirst().first
    if mode == "explain" || mode == "shrink" {
      guard arguments.count >= 3, let seed = UInt64(arguments[2]) else { return false }
      print(mode == "explain" ? explain(PeerScenario.generate(seed: seed)) : PeerShrinker.shrink(seed: seed))
      return true
    }
    let markdown = mode == "markdown"
    let countArgument = arguments.dropFirst(markdown ? 2 : 1).first
    let count = countArgument.flatMap { Int($0) }.map { max($0, 1) } ?? scenarios
    let entries = run(scenarios: count)
    if markdown {
      print(PeerMarkdown.tables(entries, scenarios: count))
      return true
    }
    let command = "swift run -c release zephyr-bench peers" + (countArgument.map { " \($0)" } ?? "")
    print(BenchJSON.text(Report(command: command, peers: entries)))
    return true
  }
}

import Foundation

/// The two "Compared with" tables (README.md has the first, ComparedWithOtherLibraries.md
/// both) from one run's `peers` entries, so that a new run replaces them whole:
///
///     swift run -c release zephyr-bench peers markdown
enum PeerMarkdown {
  static let names = [
    "zephyr-3.8/4": "Zephyr 3.8 / 4", "zephyr-5.0.1": "Zephyr 5.0.1", "defaults-9": "Defaults 9",
    "this": "this engine",
  ]

  static func tables(_ entries: [[String: Any]], scenarios: Int) -> String {
    let outcomes = [
      "| design | lost writes | lost writes, converged scenarios | overwritten before push (inbound) "
        + "| yielded to cloud history (causally later) | resurrected deletes | not converged (of \(scenarios)) "
        + "| store writes / edit | bytes / edit | `synchronize()` / edit | extra store keys |",
      "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    let fates = [
      "| design | edits | pushed | superseded by own next edit | removal of an absent key "
        + "| overwritten by an inbound event | yielded to cloud history | replaced at relaunch | never pushed |",
      "|---|---|---|---|---|---|---|---|---|",
    ]
    return (outcomes + entries.map(outcomeRow) + [""] + fates + entries.map(fateRow)).joined(separator: "\n")
  }

  private static func outcomeRow(_ entry: [String: Any]) -> String {
    let ours = entry["design"] as? String == "this"
    func int(_ field: String) -> String {
      let text = "\(entry[field] as? Int ?? 0)"
      return ours && ["lost_writes", "lost_writes_converged", "resurrected_deletes"].contains(field)
        ? "**\(text)**" : text
    }
    func number(_ field: String) -> String {
      String(format: "%.2f", entry[field] as? Double ?? 0)
    }
    let cells = [
      name(entry), int("lost_writes"), int("lost_writes_converged"), int("overwritten_before_push"),
      "\(int("yielded_to_cloud_history")) (\(int("yielded_causally_later")))", int("resurrected_deletes"),
      int("not_converged"), number("store_writes_per_edit"),
      "\(Int((entry["bytes_per_edit"] as? Double ?? 0).rounded()))",
      number("synchronize_calls_per_edit"), int("extra_store_keys"),
    ]
    return "| " + cells.joined(separator: " | ") + " |"
  }

  private static func fateRow(_ entry: [String: Any]) -> String {
    let fields = [
      "edits", "edits_pushed", "edits_superseded_by_own_edit", "removals_of_absent_keys", "overwritten_before_push",
      "yielded_to_cloud_history", "replaced_at_relaunch", "edits_never_pushed",
    ]
    return "| " + ([name(entry)] + fields.map { "\(entry[$0] as? Int ?? 0)" }).joined(separator: " | ") + " |"
  }

  private static func name(_ entry: [String: Any]) -> String {
    let design = entry["design"] as? String ?? "?"
    return names[design] ?? design
  }
}

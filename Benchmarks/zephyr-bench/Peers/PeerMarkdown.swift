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

  static func tables(_ entries: [PeerReport], scenarios: Int) -> String {
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

  private static func outcomeRow(_ entry: PeerReport) -> String {
    let ours = entry.design == "this"
    func int(_ value: Int, bold: Bool = false) -> String {
      ours && bold ? "**\(value)**" : "\(value)"
    }
    func number(_ value: Double) -> String {
      String(format: "%.2f", value)
    }
    let cells = [
      name(entry), int(entry.lostWrites, bold: true), int(entry.lostWritesConverged, bold: true),
      int(entry.overwrittenBeforePush), "\(entry.yieldedToCloudHistory) (\(entry.yieldedCausallyLater))",
      int(entry.resurrectedDeletes, bold: true), int(entry.notConverged), number(entry.storeWritesPerEdit),
      "\(Int(entry.bytesPerEdit.rounded()))", number(entry.synchronizeCallsPerEdit), int(entry.extraStoreKeys),
    ]
    return "| " + cells.joined(separator: " | ") + " |"
  }

  private static func fateRow(_ entry: PeerReport) -> String {
    let fields = [
      entry.edits, entry.editsPushed, entry.editsSupersededByOwnEdit, entry.removalsOfAbsentKeys,
      entry.overwrittenBeforePush, entry.yieldedToCloudHistory, entry.replacedAtRelaunch, entry.editsNeverPushed,
    ]
    return "| " + ([name(entry)] + fields.map { "\($0)" }).joined(separator: " | ") + " |"
  }

  private static func name(_ entry: PeerReport) -> String {
    names[entry.design] ?? entry.design
  }
}

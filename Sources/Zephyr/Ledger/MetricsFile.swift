import Foundation

/// Where a coordinator keeps its ``MetricsWindow``: beside its ledger, in the process's
/// own ledger folder (so an app and its extension each keep their own), named after the
/// ledger with `.zephyr-stats` for `.zephyr-ledger` (shorter, so it fits wherever the
/// ledger's name does, and tells domains apart as that name does). JSON, replaced
/// atomically.
struct MetricsFile: Sendable {
  let url: URL

  init(ledger: LedgerFile) {
    let name = ledger.url.lastPathComponent
    let stem = name.hasSuffix(LedgerFileName.suffix) ? String(name.dropLast(LedgerFileName.suffix.count)) : name
    url = ledger.url.deletingLastPathComponent().appendingPathComponent(stem + ".zephyr-stats")
  }

  /// The stored counters; empty when there are none, or they cannot be read (telemetry
  /// is never worth a failure).
  func load() -> MetricsWindow {
    guard let data = try? Data(contentsOf: url), let window = try? JSONDecoder().decode(MetricsWindow.self, from: data)
    else { return MetricsWindow() }
    return window
  }

  /// Replaces the file with `window`.
  func save(_ window: MetricsWindow) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try JSONEncoder().encode(window).write(to: url, options: .atomic)
  }
}

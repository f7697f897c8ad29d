import Foundation

/// Where a coordinator's ledger is kept: one file per `UserDefaults` domain, replaced
/// atomically on every save.
struct LedgerFile: Sendable {
  let url: URL

  init(directory: URL?, domainName: String) {
    let folder =
      directory
      ?? (FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
        ?? FileManager.default.temporaryDirectory).appendingPathComponent("Zephyr", isDirectory: true)
    let safeName = String(domainName.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? $0 : "_" })
    url = folder.appendingPathComponent(safeName + ".zephyr-ledger")
  }

  /// The stored ledger, `nil` when there is none.
  func load() throws(LedgerError) -> Ledger? {
    guard let data = try? Data(contentsOf: url) else { return nil }
    return try Ledger(decoding: data)
  }

  /// Replaces the stored ledger atomically.
  func save(_ ledger: Ledger) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try ledger.encoded().write(to: url, options: .atomic)
  }
}

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

  /// What a load found.
  struct Loaded {
    var ledger: Ledger
    /// Records in the file; when far above the entry count, the next save compacts.
    var records: Int
    /// Whether a damaged tail (a torn append) was ignored.
    var damagedTail: Bool
  }

  /// The stored ledger, `nil` when there is none.
  func load() throws(LedgerError) -> Loaded? {
    guard let data = try? Data(contentsOf: url) else { return nil }
    let decoded = try LedgerCodec.decode(data)
    return Loaded(ledger: decoded.ledger, records: decoded.records, damagedTail: decoded.damagedTail)
  }

  /// Replaces the file with a snapshot of `ledger`, atomically.
  func writeSnapshot(_ ledger: Ledger) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try LedgerCodec.snapshot(ledger).write(to: url, options: .atomic)
  }

  /// Appends records for changed entries to the file.
  func append(_ changes: [String: LedgerEntry?]) throws {
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: LedgerCodec.journal(changes))
  }
}

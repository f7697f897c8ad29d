import Foundation

/// Where a coordinator's ledger is kept: one file per `UserDefaults` domain, replaced
/// atomically on every save.
struct LedgerFile: Sendable {
  /// The file, named by ``LedgerFileName/name(for:)``.
  let url: URL
  /// Where earlier versions kept this domain's ledger, when that is another file (see
  /// ``LedgerFileName/legacyName(for:)``). Other domains may have written it too.
  let legacyURL: URL?

  init(directory: URL?, domainName: String) {
    let folder =
      directory
      ?? (FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
      ?? FileManager.default.temporaryDirectory).appendingPathComponent("Zephyr", isDirectory: true)
    let name = LedgerFileName.name(for: domainName)
    let legacyName = LedgerFileName.legacyName(for: domainName)
    url = folder.appendingPathComponent(name)
    legacyURL =
      legacyName == name || legacyName.utf8.count > LedgerFileName.maximumLength
      ? nil : folder.appendingPathComponent(legacyName)
  }

  /// A file beside the ledger whose presence records that the store's initial download
  /// happened (see ``InitialDownload``).
  var initialDownloadMarker: URL {
    url.deletingLastPathComponent().appendingPathComponent("initial-download-done")
  }

  /// Whether a ledger of this domain is on disk, under its name or its legacy one.
  var exists: Bool {
    FileManager.default.fileExists(atPath: url.path)
      || legacyURL.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
  }

  /// What a load found.
  struct Loaded {
    var ledger: Ledger
    /// Records in the file; when far above the entry count, the next save compacts.
    /// Zero when the ledger came from the legacy file, so that the next save writes a
    /// whole snapshot to ``LedgerFile/url``.
    var records: Int
    /// Whether a damaged tail (a torn append) was ignored.
    var damagedTail: Bool
  }

  /// The stored ledger, `nil` when there is none.
  ///
  /// When the file does not exist yet, reads the legacy file instead, which earlier
  /// versions may have written for this domain or for another one whose name mapped to
  /// the same file. The caller keeps the ledger only when its epoch is the one this
  /// domain carries (`EngineState.load`), so another domain's ledger is discarded.
  func load() throws(LedgerError) -> Loaded? {
    let source: URL
    if FileManager.default.fileExists(atPath: url.path) {
      source = url
    } else if let legacyURL, FileManager.default.fileExists(atPath: legacyURL.path) {
      source = legacyURL
    } else {
      return nil
    }
    guard let data = try? Data(contentsOf: source) else { return nil }
    let decoded = try LedgerCodec.decode(data)
    return Loaded(
      ledger: decoded.ledger, records: source == url ? decoded.records : 0, damagedTail: decoded.damagedTail)
  }

  /// Replaces the file with a snapshot of `ledger`, atomically, then removes the legacy
  /// file when it holds an older ledger of this domain (same epoch): it is superseded, and
  /// would only ever be read again as stale history.
  func writeSnapshot(_ ledger: Ledger) throws {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try LedgerCodec.snapshot(ledger).write(to: url, options: .atomic)
    if let legacyURL, let data = try? Data(contentsOf: legacyURL),
      (try? LedgerCodec.decode(data))?.ledger.epoch == ledger.epoch
    {
      try? FileManager.default.removeItem(at: legacyURL)
    }
  }

  /// Appends records for changed entries (and the clock, when it moved) to the file.
  func append(_ changes: [String: LedgerEntry?], clock: UInt64? = nil) throws {
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: LedgerCodec.journal(changes, clock: clock))
  }
}

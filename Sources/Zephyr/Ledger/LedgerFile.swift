import Foundation

/// Where a coordinator's ledger is kept: one file per `UserDefaults` domain, replaced
/// atomically on every save.
struct LedgerFile: Sendable {
  /// The file, named by ``LedgerFileName/name(for:)``.
  let url: URL
  /// Where earlier versions kept this domain's ledger, when that is another file: under
  /// ``LedgerFileName/legacyName(for:)``, and in a configured directory without a
  /// process subfolder. Other domains, or other processes, may have written them too.
  let legacyURLs: [URL]

  /// The ledger of `domainName`, in the subfolder `process-<process>` of `directory`
  /// (`process`: the bundle identifier, else the process name, when `nil`), or of the
  /// Application Support folder's `Zephyr` subfolder: processes that share a folder (an
  /// app group's container, or an app and its helper outside a sandbox) never share a
  /// ledger.
  init(directory: URL?, domainName: String, process: String? = nil) {
    let name = LedgerFileName.name(for: domainName)
    let legacyName = LedgerFileName.legacyName(for: domainName)
    let hasLegacyName = legacyName != name && legacyName.utf8.count <= LedgerFileName.maximumLength
    let parent =
      directory
      ?? (FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
      ?? FileManager.default.temporaryDirectory).appendingPathComponent("Zephyr", isDirectory: true)
    let identity = process ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    let folder = parent.appendingPathComponent(
      String(LedgerFileName.name(for: "process-" + identity).dropLast(LedgerFileName.suffix.count)),
      isDirectory: true)
    url = folder.appendingPathComponent(name)
    // Earlier versions kept it in the parent folder itself, under either name.
    legacyURLs =
      [parent.appendingPathComponent(name)] + (hasLegacyName ? [parent.appendingPathComponent(legacyName)] : [])
  }

  /// A file beside the ledger whose presence records that the store's initial download
  /// happened (see ``InitialDownload``).
  var initialDownloadMarker: URL {
    url.deletingLastPathComponent().appendingPathComponent("initial-download-done")
  }

  /// Whether a ledger of this domain is on disk, under its name or a legacy one.
  var exists: Bool {
    ([url] + legacyURLs).contains { FileManager.default.fileExists(atPath: $0.path) }
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
    /// The file's size.
    var bytes = 0
  }

  /// The stored ledger, `nil` when there is none.
  ///
  /// When the file does not exist yet, reads the legacy file instead, which earlier
  /// versions may have written for this domain or for another one whose name mapped to
  /// the same file. The caller keeps the ledger only when its epoch is the one this
  /// domain carries (`EngineState.load`), so another domain's ledger is discarded.
  func load() throws(LedgerError) -> Loaded? {
    guard let source = ([url] + legacyURLs).first(where: { FileManager.default.fileExists(atPath: $0.path) }),
      let data = try? Data(contentsOf: source)
    else { return nil }
    var decoded = try LedgerCodec.decode(data)
    // A legacy file may have been taken up by another process too: this process's
    // strategy writes start a name of their own.
    if source != url { decoded.ledger.incarnation = "" }
    return Loaded(
      ledger: decoded.ledger, records: source == url ? decoded.records : 0, damagedTail: decoded.damagedTail,
      bytes: data.count)
  }

  /// Replaces the file with a snapshot of `ledger`, atomically, then removes a legacy
  /// file that holds an older ledger of this domain (same epoch): it is superseded, and
  /// would only ever be read again as stale history. (Another process that shared it
  /// then starts without history, which loses nothing.)
  @discardableResult
  func writeSnapshot(_ ledger: Ledger) throws -> Int {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let data = LedgerCodec.snapshot(ledger)
    try data.write(to: url, options: .atomic)
    for legacy in legacyURLs {
      guard let data = try? Data(contentsOf: legacy), (try? LedgerCodec.decode(data))?.ledger.epoch == ledger.epoch
      else { continue }
      try? FileManager.default.removeItem(at: legacy)
    }
    return data.count
  }

  /// Appends records for changed entries (and the clock, when it moved) to the file,
  /// those in `references` referring to the entry the file holds; the bytes appended.
  func append(
    _ changes: [String: LedgerEntry?], clock: UInt64? = nil, references: [String: LedgerReference] = [:]
  ) throws -> Int {
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    try handle.seekToEnd()
    let data = LedgerCodec.journal(changes, clock: clock, references: references)
    try handle.write(contentsOf: data)
    return data.count
  }
}

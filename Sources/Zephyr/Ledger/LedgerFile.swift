import Foundation

/// Where a coordinator's ledger is kept: one file per `UserDefaults` domain, replaced
/// atomically on every save.
struct LedgerFile: Sendable {
  /// The file, named by ``LedgerFileName/name(for:)``.
  let url: URL

  /// The ledger of `domainName`, in the subfolder `process-<process>` of `directory`
  /// (`process`: the bundle identifier, else the process name, when `nil`), or of the
  /// Application Support folder's `Zephyr` subfolder: processes that share a folder (an
  /// app group's container, or an app and its helper outside a sandbox) never share a
  /// ledger.
  init(directory: URL?, domainName: String, process: String? = nil) {
    let name = LedgerFileName.name(for: domainName)
    let parent =
      directory
      ?? (FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
      ?? FileManager.default.temporaryDirectory).appendingPathComponent("Zephyr", isDirectory: true)
    let identity = process ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    let folder = parent.appendingPathComponent(
      String(LedgerFileName.name(for: "process-" + identity).dropLast(LedgerFileName.suffix.count)),
      isDirectory: true)
    url = folder.appendingPathComponent(name)
  }

  /// A file beside the ledger whose presence records that the store's initial download
  /// happened (see ``InitialDownload``).
  var initialDownloadMarker: URL {
    url.deletingLastPathComponent().appendingPathComponent("initial-download-done")
  }

  /// Whether a ledger of this domain is on disk.
  var exists: Bool {
    FileManager.default.fileExists(atPath: url.path)
  }

  /// What a load found.
  struct Loaded {
    var ledger: Ledger
    /// Records in the file; when far above the entry count, the next save compacts.
    var records: Int
    /// Whether a damaged tail (a torn append) was ignored.
    var damagedTail: Bool
    /// The file's size.
    var bytes = 0
  }

  /// The stored ledger, `nil` when there is none. The caller keeps it only when its
  /// epoch is the one this domain carries (`EngineState.load`).
  func load() throws(LedgerError) -> Loaded? {
    guard let data = try? Data(contentsOf: url) else { return nil }
    let decoded = try LedgerCodec.decode(data)
    return Loaded(
      ledger: decoded.ledger, records: decoded.records, damagedTail: decoded.damagedTail, bytes: data.count)
  }

  /// Replaces the file with a snapshot of `ledger`, atomically.
  @discardableResult
  func writeSnapshot(_ ledger: Ledger) throws -> Int {
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    let data = LedgerCodec.snapshot(ledger)
    try data.write(to: url, options: .atomic)
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

import Foundation

/// A snapshot of what a coordinator did and why: for a sync-status screen or a bug report.
///
/// ```swift
/// print(Zephyr.status)
/// ```
///
/// Printed, it is a table of the store's usage, the largest keys, the last push, pull and
/// event, and every refused key with its reason. See <doc:LimitsAndDiagnostics>.
public struct SyncStatus: Sendable, Equatable, CustomStringConvertible {
  /// One inbound store event.
  public struct Event: Sendable, Equatable {
    /// Why the store changed.
    public internal(set) var reason: ExternalChange.Reason
    /// When the coordinator received the event.
    public internal(set) var date: Date
    /// How many keys the event named; `nil` when it named none (meaning "all").
    public internal(set) var keyCount: Int?
  }

  /// One store key and the bytes it uses: what the store counts for it, and what its
  /// value alone would take, so that an app sees what compression and packing saved.
  ///
  /// ```swift
  /// if let starred = coordinator.status.keySizes.first(where: { $0.key == "starred" }) {
  ///   print(starred.valueBytes ?? 0, "bytes of value in a record of", starred.recordBytes)  // 39851 … 16483
  /// }
  /// ```
  public struct KeySize: Sendable, Equatable {
    /// The store key.
    public internal(set) var key: String
    /// Its UTF-8 bytes plus its stored record's binary-plist size: what the store counts
    /// against its 1 MB (``recordBytes`` plus the key's bytes).
    public internal(set) var bytes: Int
    /// The stored record's binary-plist size (after compression, for a compressed
    /// record; the merge state, for a key merged by a strategy).
    public internal(set) var recordBytes: Int
    /// The binary-plist size of the key's value as `UserDefaults` holds it: plain,
    /// without Zephyr's record. `nil` for a tombstone and for a record this device cannot
    /// read. `recordBytes - valueBytes` is what the record costs over the bare value;
    /// below zero, what compression saved.
    public internal(set) var valueBytes: Int?
    /// Whether the store holds the key's record compressed.
    public internal(set) var isCompressed: Bool

    /// Creates an entry: `bytes` alone, as the store counts them.
    init(key: String, bytes: Int, recordBytes: Int? = nil, valueBytes: Int? = nil, isCompressed: Bool = false) {
      self.key = key
      self.bytes = bytes
      self.recordBytes = recordBytes ?? max(0, bytes - key.utf8.count)
      self.valueBytes = valueBytes
      self.isCompressed = isCompressed
    }
  }

  /// The limits the coordinator checks against.
  public internal(set) var limits: StoreLimits = .iCloud
  /// The store's estimated size: every key's UTF-8 bytes plus every value's binary-plist
  /// size, as the store accounts them. On Apple platforms an upper bound (see
  /// ``PropertyListValue/estimatedBinaryPlistSize``).
  public internal(set) var estimatedBytes = 0
  /// How many keys the store holds, as far as this device has seen.
  public internal(set) var keyCount = 0
  /// The five largest store keys, largest first.
  public internal(set) var largestKeys: [KeySize] = []
  /// Every store key this device has seen, by name, with the bytes of its value and of
  /// its stored record: what compression (``SyncConfiguration/compressedKeys``) and
  /// packing saved, key by key. Computed when the status is read.
  public internal(set) var keySizes: [KeySize] = []
  /// The bytes Zephyr's records add over the bare values (whole tombstones included).
  public internal(set) var overheadBytes = 0
  /// Whether the device is signed into an iCloud account: `false` when the store reports
  /// none (see ``UbiquitousStore``'s `isSignedIn`), `nil` where the store cannot tell
  /// (off Apple platforms).
  public internal(set) var isSignedIn: Bool?
  /// What the store's `synchronize()` returned the last time Zephyr called it; `nil`
  /// before the first call. `false` means the app cannot use iCloud: no account, or the
  /// app lacks the key-value storage entitlement. Nothing syncs until it returns `true`.
  public internal(set) var lastSynchronizeSucceeded: Bool?
  /// When this device last wrote to the store.
  public internal(set) var lastPush: Date?
  /// When this device last wrote a value from the store into `UserDefaults`.
  public internal(set) var lastPull: Date?
  /// The last inbound store event.
  public internal(set) var lastEvent: Event?
  /// When the store last reported a quota violation.
  public internal(set) var lastQuotaViolation: Date?
  /// When the store last reported an account change.
  public internal(set) var lastAccountChange: Date?
  /// Keys Zephyr left alone, with the reason. A key leaves the list when it syncs; a key
  /// refused as ``RefusalReason/unencodable(_:)`` stays until a typed write of it succeeds.
  public internal(set) var refusedKeys: [String: RefusalReason] = [:]
  /// The keys whose inbound changes and local edits are applied automatically.
  public internal(set) var monitoredKeys: Set<String> = []
  /// The prefixes whose keys are monitored as they appear; see
  /// ``SyncCoordinator/addKeysToBeMonitored(prefix:)``.
  public internal(set) var monitoredPrefixes: Set<String> = []
  /// Whether the store's initial download has happened on this device (a new install, an
  /// account change); see ``InitialDownload`` and
  /// ``SyncCoordinator/waitForInitialDownload(timeout:)``.
  public internal(set) var initialDownload: InitialDownload = .unknown
  /// Whether protected data is available: `false` while the device has not been unlocked
  /// since it restarted (an app launched in the background, or prewarmed, before the
  /// first unlock), when `UserDefaults` reads as empty and Zephyr's ledger cannot be read.
  /// Zephyr then does nothing to `UserDefaults`, its ledger or the store: what was asked
  /// (syncs, inbound events, local edits, typed sets) waits, and runs once the data is
  /// available. See <doc:GettingStarted#Launching-before-the-first-unlock>.
  public internal(set) var isProtectedDataAvailable = true
  /// How many operations wait for protected data to become available (see
  /// ``isProtectedDataAvailable``); 0 when it is.
  public internal(set) var waitingOperations = 0
  /// The latest time the store's server lost every value at once (a CloudKit zone the
  /// user or another app deleted, an encrypted-data reset, a purge) and what the store
  /// did; `nil` when it never did. See ``StoreReset``.
  public internal(set) var lastStoreReset: StoreReset?
  /// Problems with Zephyr's own state, such as a corrupt ledger that was discarded.
  public internal(set) var notes: [String] = []

  /// An empty status. The coordinator keeps in its own state what a status shows of its
  /// settings and refusals (``limits``, ``monitoredKeys``, ``monitoredPrefixes``,
  /// ``refusedKeys``) and fills them in when the status is read.
  init() {}

  /// A readable table of the status.
  public var description: String {
    var lines = ["Zephyr status"]
    func row(_ label: String, _ value: String) {
      lines.append(label.padding(toLength: 22, withPad: " ", startingAt: 0) + value)
    }
    func time(_ date: Date?) -> String { date?.ISO8601Format() ?? "never" }
    func percent(_ part: Int, _ whole: Int) -> String {
      whole > 0 ? String(format: "%.1f%%", Double(part) * 100 / Double(whole)) : "-"
    }
    func usage(_ part: Int, _ whole: Int) -> String {
      whole == .max ? "\(part) (no limit)" : "\(part) / \(whole) (\(percent(part, whole)))"
    }
    row("store bytes", usage(estimatedBytes, limits.maximumTotalBytes))
    row("store keys", usage(keyCount, limits.maximumKeyCount))
    row("Zephyr overhead", "\(overheadBytes) bytes")
    for (index, entry) in largestKeys.enumerated() {
      let value = entry.valueBytes.map { " (value \($0) bytes\(entry.isCompressed ? ", compressed" : ""))" } ?? ""
      row(index == 0 ? "largest keys" : "", "\(entry.key): \(entry.bytes) bytes\(value)")
    }
    row("iCloud account", isSignedIn.map { $0 ? "signed in" : "signed out" } ?? "unknown")
    row(
      "synchronize()",
      lastSynchronizeSucceeded.map { $0 ? "succeeded" : "FAILED: no iCloud account or no entitlement" } ?? "not called")
    row("monitored keys", monitoredKeys.isEmpty ? "none" : monitoredKeys.sorted().joined(separator: ", "))
    if !monitoredPrefixes.isEmpty {
      row("monitored prefixes", monitoredPrefixes.sorted().map { "\($0)*" }.joined(separator: ", "))
    }
    row("initial download", "\(initialDownload)")
    row(
      "protected data",
      isProtectedDataAvailable ? "available" : "UNAVAILABLE (before the first unlock): \(waitingOperations) waiting")
    row("last push", time(lastPush))
    row("last pull", time(lastPull))
    if let lastEvent {
      let count = lastEvent.keyCount.map { "\($0) keys" } ?? "all keys"
      row("last event", "\(lastEvent.reason) at \(time(lastEvent.date)), \(count)")
    } else {
      row("last event", "none")
    }
    row("quota violation", time(lastQuotaViolation))
    row("account change", time(lastAccountChange))
    if let lastStoreReset { row("store reset", "\(lastStoreReset)") }
    if refusedKeys.isEmpty {
      row("refused keys", "none")
    } else {
      row("refused keys", "\(refusedKeys.count)")
      for key in refusedKeys.keys.sorted() {
        lines.append("  \(key): \(refusedKeys[key].map(String.init(describing:)) ?? "")")
      }
    }
    for note in notes { row("note", note) }
    return lines.joined(separator: "\n")
  }
}

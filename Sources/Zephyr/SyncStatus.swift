import Foundation

/// A snapshot of what a coordinator did and why: for a sync-status screen or a bug report.
///
/// ```swift
/// print(Zephyr.status)
/// ```
public struct SyncStatus: Sendable, Equatable, CustomStringConvertible {
  /// One inbound store event.
  public struct Event: Sendable, Equatable {
    /// Why the store changed.
    public var reason: ExternalChange.Reason
    /// When the coordinator received the event.
    public var date: Date
    /// How many keys the event named; `nil` when it named none (meaning "all").
    public var keyCount: Int?
  }

  /// The limits the coordinator checks against.
  public var limits: StoreLimits
  /// When this device last wrote to the store.
  public var lastPush: Date?
  /// When this device last wrote a value from the store into `UserDefaults`.
  public var lastPull: Date?
  /// The last inbound store event.
  public var lastEvent: Event?
  /// When the store last reported a quota violation.
  public var lastQuotaViolation: Date?
  /// When the store last reported an account change.
  public var lastAccountChange: Date?
  /// Keys Zephyr left alone, with the reason. A key leaves the list when it syncs.
  public var refusedKeys: [String: RefusalReason]
  /// The keys whose inbound changes and local edits are applied automatically.
  public var monitoredKeys: Set<String>
  /// Problems with Zephyr's own state, such as a corrupt ledger that was discarded.
  public var notes: [String]

  init(limits: StoreLimits) {
    self.limits = limits
    refusedKeys = [:]
    monitoredKeys = []
    notes = []
  }

  /// A readable table of the status.
  public var description: String {
    var lines = ["Zephyr status"]
    func row(_ label: String, _ value: String) {
      lines.append(label.padding(toLength: 22, withPad: " ", startingAt: 0) + value)
    }
    func time(_ date: Date?) -> String { date?.ISO8601Format() ?? "never" }
    row("monitored keys", monitoredKeys.isEmpty ? "none" : monitoredKeys.sorted().joined(separator: ", "))
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

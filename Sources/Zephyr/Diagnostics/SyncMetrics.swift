import Foundation

/// What this process's coordinator did over the last seven days, for the app to forward
/// to its own telemetry (see <doc:SeeingSyncInTheField>).
///
/// ```swift
/// let m = coordinator.metrics
/// print(m)                                   // a table, like SyncStatus
/// analytics.log("zephyr.avgWrite", m.averageWriteBytes)
/// analytics.log("zephyr.signedOutShare", Double(m.launchesSignedOut) / Double(max(m.launches, 1)))
/// ```
///
/// - Counted per process, in day buckets (UTC days of ``SyncConfiguration/clock``): an
///   app and its extension on one app-group suite each count their own. The seven most
///   recent days are summed; older buckets are dropped as days pass.
/// - Kept beside the ledger, in the process's own ledger folder, so they survive
///   relaunches: saved at launch, on a new day, after a full sync that changed the drift
///   figure and when the app moves to the background, and otherwise at most once a minute
///   (never per edit). A process ended in the foreground loses at most its last minute of
///   counts.
/// - Counting reads nothing: no store or `UserDefaults` access is added. The figures come
///   from what each batch does anyway. No value's content is kept, only counts and sizes.
/// - ``SyncCoordinator/resetMetrics()`` starts them over.
public struct SyncMetrics: Codable, Sendable, Equatable, CustomStringConvertible {
  /// Records this process wrote to the store (pushes, republished and merged records;
  /// a tombstone is a record too). Removals of expired tombstones are not counted.
  public var storeWrites = 0
  /// Bytes of those records, as the store accounts them (the key plus the record's
  /// binary-plist size), the same figure the budget checks against the store's limits.
  public var storeBytesWritten = 0
  /// ``storeBytesWritten`` / ``storeWrites``, rounded down; 0 when nothing was written.
  public var averageWriteBytes: Int { storeWrites == 0 ? 0 : storeBytesWritten / storeWrites }
  /// The store's external-change events this process handled, by reason. A reason that
  /// never arrived has no entry.
  public var events: [ExternalChange.Reason: Int] = [:]
  /// Coordinators created (app launches, for an app that creates one at launch).
  public var launches = 0
  /// Of ``launches``, those where the store reported no iCloud account at creation
  /// (``KeyValueSyncStore/isSignedIn`` was `false`; `nil`, unknown, is not counted).
  public var launchesSignedOut = 0
  /// Keys whose local value differed from the store's when the last full
  /// ``SyncCoordinator/sync()`` read them, before it merged: drift the app's own
  /// `UserDefaults` writes and the store's deliveries had not reconciled yet. Not
  /// summed over days: the last full sync's figure (0 before the first one).
  public var keysDifferingFromStore = 0
  /// How long other devices' writes took to arrive here, when
  /// ``SyncConfiguration/measuresDeliveryDelay`` is on and at least one was measured;
  /// otherwise `nil`.
  public var deliveryDelay: DelayQuartiles?
  /// Keys left alone, by kind of ``RefusalReason`` (`"overQuota"`, `"keyTooLong"`, …):
  /// each time a key is refused for a reason it was not already refused for.
  public var refusals: [String: Int] = [:]

  /// Empty metrics.
  public init() {}

  /// The delay between a write on one device and its arrival on this one.
  ///
  /// Measured on the receiving device, for each key a ``ExternalChange/Reason/serverChange``
  /// event brings (pulled, or merged into the local value) whose record carries its
  /// writer's wall-clock time: the receiver's ``SyncConfiguration/clock`` at the batch
  /// minus that time. So it includes the clock difference between the two devices.
  ///
  /// The delays go into fixed buckets (``bucketBounds``: 0, 0.25 s, 0.5 s, … 7 days, and
  /// one for longer), not a list that grows: each quartile reads as the upper bound of
  /// the bucket it falls in (a 4.2 s delay reads as 5 s), the rank of the *q*-quantile of
  /// *n* delays being ⌈*q*·*n*⌉. Delays beyond 7 days read as 7 days.
  public struct DelayQuartiles: Codable, Sendable, Equatable {
    /// The first quartile, in seconds.
    public var lower: TimeInterval
    /// The median, in seconds.
    public var median: TimeInterval
    /// The third quartile, in seconds.
    public var upper: TimeInterval
    /// How many delays were measured.
    public var count: Int
    /// Of ``count``, the delays that came out negative (the writer's clock was ahead of
    /// this device's) and were counted as 0. Many of them mean the devices' clocks
    /// disagree, and the quartiles read low.
    public var clamped: Int

    /// Quartiles from their parts; the coordinator makes them.
    public init(lower: TimeInterval, median: TimeInterval, upper: TimeInterval, count: Int, clamped: Int) {
      self.lower = lower
      self.median = median
      self.upper = upper
      self.count = count
      self.clamped = clamped
    }

    /// The upper bounds of the buckets delays are counted in, in seconds; a last bucket
    /// holds every longer delay.
    public static let bucketBounds: [TimeInterval] = DelaySketch.bounds
  }

  /// A readable table of the metrics.
  public var description: String {
    var lines = ["Zephyr metrics (last 7 days, this process)"]
    func row(_ label: String, _ value: String) {
      lines.append(label.padding(toLength: 22, withPad: " ", startingAt: 0) + value)
    }
    func seconds(_ value: TimeInterval) -> String { String(format: "%.2f s", value) }
    row("store writes", "\(storeWrites), \(storeBytesWritten) bytes (average \(averageWriteBytes))")
    let signedOut =
      launches > 0 ? String(format: " (%.0f%%)", Double(launchesSignedOut) * 100 / Double(launches)) : ""
    row("launches", "\(launches), \(launchesSignedOut) signed out\(signedOut)")
    let reasons = ExternalChange.Reason.allCases.compactMap { reason in
      events[reason].map { "\(reason) \($0)" }
    }
    row("events", reasons.isEmpty ? "none" : reasons.joined(separator: ", "))
    row("differing from store", "\(keysDifferingFromStore) keys at the last full sync")
    if let delay = deliveryDelay {
      row(
        "delivery delay",
        "\(seconds(delay.lower)) / \(seconds(delay.median)) / \(seconds(delay.upper)) (quartiles of \(delay.count), "
          + "\(delay.clamped) clamped from negative)")
    } else {
      row("delivery delay", "not measured")
    }
    if refusals.isEmpty {
      row("refusals", "none")
    } else {
      row("refusals", refusals.keys.sorted().map { "\($0) \(refusals[$0] ?? 0)" }.joined(separator: ", "))
    }
    return lines.joined(separator: "\n")
  }

  private enum CodingKeys: String, CodingKey {
    case storeWrites, storeBytesWritten, events, launches, launchesSignedOut, keysDifferingFromStore
    case deliveryDelay, refusals
  }

  /// Decodes metrics encoded by ``encode(to:)``; events of a reason this build does not
  /// know are dropped.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    storeWrites = try container.decode(Int.self, forKey: .storeWrites)
    storeBytesWritten = try container.decode(Int.self, forKey: .storeBytesWritten)
    let named = try container.decode([String: Int].self, forKey: .events)
    for reason in ExternalChange.Reason.allCases {
      if let count = named[String(describing: reason)] { events[reason] = count }
    }
    launches = try container.decode(Int.self, forKey: .launches)
    launchesSignedOut = try container.decode(Int.self, forKey: .launchesSignedOut)
    keysDifferingFromStore = try container.decode(Int.self, forKey: .keysDifferingFromStore)
    deliveryDelay = try container.decodeIfPresent(DelayQuartiles.self, forKey: .deliveryDelay)
    refusals = try container.decode([String: Int].self, forKey: .refusals)
  }

  /// Encodes the stored figures; ``events`` by reason name (`"serverChange"`), so that
  /// the JSON reads as it prints.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(storeWrites, forKey: .storeWrites)
    try container.encode(storeBytesWritten, forKey: .storeBytesWritten)
    var named: [String: Int] = [:]
    for (reason, count) in events { named[String(describing: reason)] = count }
    try container.encode(named, forKey: .events)
    try container.encode(launches, forKey: .launches)
    try container.encode(launchesSignedOut, forKey: .launchesSignedOut)
    try container.encode(keysDifferingFromStore, forKey: .keysDifferingFromStore)
    try container.encodeIfPresent(deliveryDelay, forKey: .deliveryDelay)
    try container.encode(refusals, forKey: .refusals)
  }
}

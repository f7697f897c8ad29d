import Foundation

/// The counters behind ``SyncMetrics``: one bucket per UTC day of the configured clock,
/// the last ``days`` of them kept. Held in ``EngineState``; saved beside the ledger by
/// ``MetricsFile`` when ``isDirty``. Counting only adds to the current bucket: it calls
/// nothing and reads nothing.
struct MetricsWindow: Codable, Sendable, Equatable {
  /// One day's counts.
  struct Day: Codable, Sendable, Equatable {
    /// Days since 2001-01-01 UTC.
    var day: Int
    var storeWrites = 0
    var storeBytes = 0
    /// Indexed by ``ExternalChange/Reason`` raw value.
    var events: [Int] = []
    var launches = 0
    var launchesSignedOut = 0
    var refusals: [String: Int] = [:]
    var delays = DelaySketch()

    /// Adds `count` events of the reason whose raw value is `index`.
    mutating func addEvents(_ index: Int, _ count: Int) {
      if events.count <= index { events += Array(repeating: 0, count: index + 1 - events.count) }
      events[index] += count
    }
  }

  /// How many days are summed.
  static let days = 7

  /// The buckets, oldest first; the last is the current day.
  private(set) var buckets: [Day] = []
  /// See ``SyncMetrics/keysDifferingFromStore``.
  var keysDifferingFromStore = 0
  /// Whether something changed since the last save (not saved itself).
  var isDirty = false
  /// Bumped on every change, so that ``SyncCoordinator/metricsUpdates`` yields only news
  /// (not saved).
  var version = 0
  /// Whether the next save is due whenever it comes: a launch, a new day or a reset was
  /// counted (not saved).
  var saveDue = true
  /// When the counters were last saved, by the configured clock (not saved).
  var savedAt: Date?
  /// How long counts may wait in memory for their save: a crash loses at most this much.
  static let saveInterval: TimeInterval = 60
  /// Whether anything is counted; off only in zephyr-bench's comparison, which measures
  /// what counting costs (not saved).
  var isCounting = true

  private enum CodingKeys: String, CodingKey {
    case buckets, keysDifferingFromStore
  }

  /// The day `date` falls in: whole days since 2001-01-01 UTC.
  static func day(of date: Date) -> Int {
    Int((date.timeIntervalSinceReferenceDate / 86_400).rounded(.down))
  }

  /// Makes `day` the current day: counting goes to its bucket from now on, and buckets
  /// that fell out of the window are dropped. A clock that went back keeps counting in
  /// the latest bucket.
  mutating func roll(to day: Int) {
    guard isCounting, buckets.last.map({ day > $0.day }) ?? true else { return }
    buckets.append(Day(day: day))
    buckets.removeAll { $0.day <= day - Self.days }
    changed()
    saveDue = true
  }

  private mutating func changed() {
    isDirty = true
    version &+= 1
  }

  /// Adds to the current bucket (one is made for day 0 when no day was rolled to yet).
  private mutating func count(_ body: (inout Day) -> Void) {
    guard isCounting else { return }
    if buckets.isEmpty { buckets.append(Day(day: 0)) }
    body(&buckets[buckets.count - 1])
    changed()
  }

  mutating func countStoreWrites(_ sizes: [Int]) {
    guard !sizes.isEmpty else { return }
    count { day in
      day.storeWrites += sizes.count
      day.storeBytes += sizes.reduce(0, +)
    }
  }

  mutating func countEvent(_ reason: ExternalChange.Reason) {
    count { $0.addEvents(reason.rawValue, 1) }
  }

  mutating func countLaunch(signedOut: Bool) {
    count { day in
      day.launches += 1
      if signedOut { day.launchesSignedOut += 1 }
    }
    saveDue = true
  }

  mutating func countRefusal(_ reason: RefusalReason) {
    count { $0.refusals[reason.kind, default: 0] += 1 }
  }

  mutating func countDelays(_ delays: [TimeInterval]) {
    guard !delays.isEmpty else { return }
    count { day in
      for delay in delays { day.delays.add(delay) }
    }
  }

  mutating func setKeysDifferingFromStore(_ count: Int) {
    guard isCounting, count != keysDifferingFromStore else { return }
    keysDifferingFromStore = count
    changed()
    // A full sync is rare and reads everything: its figure is saved with it.
    saveDue = true
  }

  /// Adds `other`'s counts (made while the ledger could not be read) to these.
  mutating func absorb(_ other: MetricsWindow) {
    for bucket in other.buckets {
      roll(to: bucket.day)
      count { day in
        day.storeWrites += bucket.storeWrites
        day.storeBytes += bucket.storeBytes
        for (index, events) in bucket.events.enumerated() { day.addEvents(index, events) }
        day.launches += bucket.launches
        day.launchesSignedOut += bucket.launchesSignedOut
        day.refusals.merge(bucket.refusals, uniquingKeysWith: +)
        day.delays.absorb(bucket.delays)
      }
    }
  }

  /// Starts over: every count is dropped, the next save writes the empty window.
  mutating func reset() {
    let today = buckets.last?.day
    buckets = today.map { [Day(day: $0)] } ?? []
    keysDifferingFromStore = 0
    changed()
    saveDue = true
  }

  /// Whether the counters are to be saved at `now`: they changed, and a launch, a new
  /// day or a reset was counted, or ``saveInterval`` passed since the last save.
  func needsSave(at now: Date?) -> Bool {
    guard isDirty else { return false }
    guard !saveDue, let now, let savedAt else { return true }
    return now.timeIntervalSince(savedAt) >= Self.saveInterval || now < savedAt
  }

  /// The metrics of the seven days ending on `today` (`measuring`: whether delivery
  /// delay is measured; else it reads `nil`).
  func summary(today: Int, measuring: Bool) -> SyncMetrics {
    var metrics = SyncMetrics()
    var delays = DelaySketch()
    for bucket in buckets where bucket.day > today - Self.days && bucket.day <= today {
      metrics.storeWrites += bucket.storeWrites
      metrics.storeBytesWritten += bucket.storeBytes
      for (index, count) in bucket.events.enumerated() where count > 0 {
        if let reason = ExternalChange.Reason(rawValue: index) { metrics.events[reason, default: 0] += count }
      }
      metrics.launches += bucket.launches
      metrics.launchesSignedOut += bucket.launchesSignedOut
      metrics.refusals.merge(bucket.refusals, uniquingKeysWith: +)
      delays.absorb(bucket.delays)
    }
    metrics.keysDifferingFromStore = keysDifferingFromStore
    metrics.deliveryDelay = measuring ? delays.quartiles : nil
    return metrics
  }
}

/// Delivery delays as counts in fixed buckets: the same size however many are added.
struct DelaySketch: Codable, Sendable, Equatable {
  /// Upper bounds of the buckets, in seconds; one more bucket holds longer delays.
  static let bounds: [TimeInterval] = [
    0, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 90, 120, 180, 240, 300, 450,
    600, 900, 1_200, 1_800, 2_700, 3_600, 7_200, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800,
  ]

  /// Delays per bucket (index into ``bounds``, one past it for longer delays); empty
  /// until the first is added.
  private(set) var counts: [Int] = []
  /// Delays that came out negative and were counted as 0.
  private(set) var clamped = 0

  var total: Int { counts.reduce(0, +) }

  /// Counts `delay`, a negative one as 0 (and in ``clamped``).
  mutating func add(_ delay: TimeInterval) {
    if counts.isEmpty { counts = Array(repeating: 0, count: Self.bounds.count + 1) }
    if delay < 0 { clamped += 1 }
    let value = max(delay, 0)
    let index = Self.bounds.firstIndex { value <= $0 } ?? Self.bounds.count
    counts[index] += 1
  }

  mutating func absorb(_ other: DelaySketch) {
    guard !other.counts.isEmpty else { return }
    if counts.isEmpty { counts = Array(repeating: 0, count: Self.bounds.count + 1) }
    for (index, count) in other.counts.enumerated() where index < counts.count { counts[index] += count }
    clamped += other.clamped
  }

  /// The quartiles, each the upper bound of its bucket (the last bucket reads as the
  /// last bound); `nil` when nothing was added.
  var quartiles: SyncMetrics.DelayQuartiles? {
    let total = self.total
    guard total > 0 else { return nil }
    func quantile(_ q: Double) -> TimeInterval {
      let rank = max(1, Int((q * Double(total)).rounded(.up)))
      var seen = 0
      for (index, count) in counts.enumerated() {
        seen += count
        if seen >= rank { return Self.bounds[min(index, Self.bounds.count - 1)] }
      }
      return Self.bounds[Self.bounds.count - 1]
    }
    return SyncMetrics.DelayQuartiles(
      lower: quantile(0.25), median: quantile(0.5), upper: quantile(0.75), count: total, clamped: clamped)
  }
}

extension RefusalReason {
  /// The kind of refusal, for ``SyncMetrics/refusals``: the case's name.
  var kind: String {
    switch self {
    case .keyTooLong: "keyTooLong"
    case .systemKey: "systemKey"
    case .bookkeepingKey: "bookkeepingKey"
    case .notPropertyList: "notPropertyList"
    case .malformedRecord: "malformedRecord"
    case .unsupportedFormat: "unsupportedFormat"
    case .unreadableCompressedRecord: "unreadableCompressedRecord"
    case .strategyCannotMerge: "strategyCannotMerge"
    case .overQuota: "overQuota"
    case .tooManyKeys: "tooManyKeys"
    case .unencodable: "unencodable"
    case .undecodableLocalValue: "undecodableLocalValue"
    }
  }
}

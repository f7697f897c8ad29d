import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A clock the test moves: 01:00 UTC of a fixed day, then wherever the test says.
final class TestClock: Sendable {
  static let day = 9_259
  let now = Locked(Date(timeIntervalSinceReferenceDate: Double(TestClock.day) * 86_400 + 3_600))

  func advance(by seconds: TimeInterval) {
    now.withLock { $0 += seconds }
  }

  var read: @Sendable () -> Date { { [now] in now.withLock { $0 } } }
}

@Suite("Metrics")
struct MetricsTests {
  /// The store bytes of what `device`'s store holds for `key`, as the budget sizes it.
  private static func storeBytes(_ device: TestDevice, _ key: String) -> Int {
    device.store.value(forKey: key).map { PropertyListValue.storeSize(key: key, value: $0) } ?? 0
  }

  @Test func storeWritesCountRecordsAndTheirBytesAsTheBudgetSizesThem() {
    let harness = Harness()
    let clock = TestClock()
    let a = harness.device("A", monitored: ["theme", "size"]) { $0.clock = clock.read }
    var bytes = 0
    a.set(.string("dusk"), "theme")
    bytes += Self.storeBytes(a, "theme")
    a.set(.string("a much longer value than the first one"), "theme")
    bytes += Self.storeBytes(a, "theme")
    a.set(.integer(12), "size")
    bytes += Self.storeBytes(a, "size")
    let metrics = a.coordinator.metrics
    #expect(metrics.storeWrites == 3)
    #expect(a.store.statistics.writes == 3)
    #expect(metrics.storeBytesWritten == bytes)
    #expect(metrics.averageWriteBytes == bytes / 3)
    #expect(SyncMetrics().averageWriteBytes == 0)
  }

  @Test func eventsAreCountedByReason() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme"]), to: "A")
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["other"]), to: "A")
    harness.cloud.post(ExternalChange(reason: .quotaViolation, keys: nil), to: "A")
    harness.cloud.switchAccount(of: "A", to: "second")
    harness.cloud.waitForDeliveries()
    a.settle()
    #expect(a.coordinator.metrics.events == [.serverChange: 2, .quotaViolation: 1, .accountChange: 1])
  }

  @Test func refusalsAreCountedByKindOncePerNewRefusal() {
    let harness = Harness()
    let a = harness.device("A")
    let long = String(repeating: "k", count: 65)
    a.coordinator.addKeysToBeMonitored(keys: ["AppleLanguages", long])
    a.coordinator.addKeysToBeMonitored(keys: [long])
    a.coordinator.sync(keys: [long])
    #expect(a.coordinator.metrics.refusals == ["systemKey": 1, "keyTooLong": 1])
  }

  @Test func launchesSurviveARelaunchAndCountEachProcessOnItsOwn() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    a.relaunch()
    a.relaunch()
    let metrics = a.coordinator.metrics
    #expect(metrics.launches == 3)
    #expect(metrics.launchesSignedOut == 0)
    #expect(metrics.storeWrites == 1)
    // An extension on the same app-group suite and store keeps its own.
    let widget = harness.device("widget", monitored: ["theme"], sharing: "A")
    #expect(widget.coordinator.metrics.launches == 1)
    #expect(widget.coordinator.metrics.storeWrites == 0)
    #expect(a.coordinator.metrics.launches == 3)
  }

  @Test func daysRollAtUTCMidnightOfTheClockAndOnlySevenAreSummed() {
    let harness = Harness()
    let clock = TestClock()
    let a = harness.device("A", monitored: ["theme"]) { $0.clock = clock.read }
    a.set(.string("one"), "theme")  // day 0: launch, 1 write
    clock.advance(by: 86_400)
    a.set(.string("two"), "theme")  // day 1: 1 write
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme"]), to: "A")
    a.relaunch()  // day 1: launch
    #expect(a.coordinator.metrics.launches == 2)
    #expect(a.coordinator.metrics.storeWrites == 2)
    // Day 6 still sums day 0; day 7 does not, even before any operation ran that day.
    clock.advance(by: 5 * 86_400)
    #expect(a.coordinator.metrics.storeWrites == 2)
    clock.advance(by: 86_400)
    let day7 = a.coordinator.metrics
    #expect(day7.storeWrites == 1)
    #expect(day7.launches == 1)
    #expect(day7.events == [.serverChange: 1])
    // After a relaunch on day 7 the old day is gone from the file too.
    a.relaunch()
    #expect(a.coordinator.metrics.launches == 2)
    #expect(a.coordinator.metrics.storeWrites == 1)
    clock.advance(by: 86_400)
    #expect(a.coordinator.metrics.launches == 1)
    #expect(a.coordinator.metrics.storeWrites == 0)
  }

  @Test func resetMetricsStartsOverAndStaysResetAfterARelaunch() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme"]), to: "A")
    a.coordinator.resetMetrics()
    #expect(a.coordinator.metrics == SyncMetrics())
    a.relaunch()
    var expected = SyncMetrics()
    expected.launches = 1
    #expect(a.coordinator.metrics == expected)
  }

  @Test func countingAddsNoStoreOrDefaultsAccess() {
    // The same edits with and without metrics read: the store sees the same calls.
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    let before = a.store.statistics
    _ = a.coordinator.metrics
    a.coordinator.resetMetrics()
    #expect(a.store.statistics == before)
  }

  @Test func metricsAreCodableAndPrintAsATable() throws {
    var metrics = SyncMetrics()
    metrics.storeWrites = 4
    metrics.storeBytesWritten = 410
    metrics.events = [.serverChange: 3, .initialSync: 1]
    metrics.launches = 25
    metrics.launchesSignedOut = 2
    metrics.keysDifferingFromStore = 1
    metrics.deliveryDelay = .init(lower: 2, median: 4, upper: 10, count: 9, clamped: 1)
    metrics.refusals = ["overQuota": 1]
    let data = try JSONEncoder().encode(metrics)
    #expect(try JSONDecoder().decode(SyncMetrics.self, from: data) == metrics)
    #expect(String(decoding: data, as: UTF8.self).contains("\"serverChange\":3"))
    let table = metrics.description
    #expect(table.contains("store writes          4, 410 bytes (average 102)"))
    #expect(table.contains("launches              25, 2 signed out (8%)"))
    #expect(table.contains("events                serverChange 3, initialSync 1"))
    #expect(table.contains("delivery delay        2.00 s / 4.00 s / 10.00 s (quartiles of 9, 1 clamped from negative)"))
    #expect(table.contains("refusals              overQuota 1"))
  }
}

@Suite("Metrics: drift")
struct MetricsDriftTests {
  @Test func aFullSyncCountsTheKeysWhoseLocalValueDiffersFromTheStoresBeforeItMerges() {
    // Linux-plain: a suite write announces nothing, so local edits wait for the sync.
    let harness = Harness(world: .linuxPlain)
    let a = harness.device("A", monitored: ["theme", "size", "font"])
    let b = harness.device("B", monitored: ["theme", "size", "font"])
    a.set(.string("dusk"), "theme")
    a.set(.integer(12), "size")
    a.set(.string("serif"), "font")
    a.coordinator.sync()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)  // no event: B's values drift
    b.coordinator.sync()  // B takes all three
    #expect(b.coordinator.metrics.keysDifferingFromStore == 3)
    b.coordinator.sync()
    #expect(b.coordinator.metrics.keysDifferingFromStore == 0)
    // Drift: A changes two keys, B's store gets them without an event; B edits a new key.
    a.set(.string("dawn"), "theme")
    a.set(.integer(14), "size")
    a.coordinator.sync()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)
    b.set(.bool(true), "bold")
    b.coordinator.sync(keys: ["theme"])  // only a full sync counts
    #expect(b.coordinator.metrics.keysDifferingFromStore == 0)
    b.coordinator.sync()
    // size (pulled) and bold (pushed); theme was reconciled by sync(keys:).
    #expect(b.coordinator.metrics.keysDifferingFromStore == 2)
    b.relaunch()
    #expect(b.coordinator.metrics.keysDifferingFromStore == 2)
    b.coordinator.sync()
    #expect(b.coordinator.metrics.keysDifferingFromStore == 0)
  }
}

@Suite("Metrics: signed out")
struct MetricsSignedOutTests {
  @Test func aSignedOutDeviceCountsItsLaunchesAndReportsNoAccount() {
    let harness = Harness()
    _ = harness.cloud.device("A", initiallyDownloaded: true)
    harness.cloud.signOut("A")
    let a = harness.device("A", monitored: ["theme"])
    #expect(a.store.isSignedIn == false)
    #expect(a.coordinator.status.isSignedIn == false)
    a.set(.string("dusk"), "theme")
    // No account: the write stays on the device, and synchronize() says so.
    harness.cloud.upload()
    #expect(harness.cloud.serverValues["theme"] == nil)
    #expect(a.store.synchronize() == false)
    a.relaunch()
    harness.cloud.signIn("A")
    a.relaunch()
    #expect(a.store.isSignedIn == true)
    let metrics = a.coordinator.metrics
    #expect(metrics.launches == 3)
    #expect(metrics.launchesSignedOut == 2)
    // Signed in again, the write made meanwhile reaches the server.
    harness.cloud.upload()
    #expect(harness.cloud.serverValues["theme"] != nil)
  }
}

@Suite("Metrics: delivery delay")
struct MetricsDeliveryDelayTests {
  /// A writes, the clock moves `seconds`, B receives the change. B's clock runs `skew`
  /// seconds off A's.
  private struct Pair {
    let harness = Harness()
    let clock = TestClock()
    let skew = Locked(0.0)
    let a: TestDevice
    let b: TestDevice

    init(aMeasures: Bool = true, bMeasures: Bool = true, strategy: MergeStrategy? = nil, compressed: Bool = false) {
      let read = clock.read
      let skew = skew
      let skewedRead: @Sendable () -> Date = { read() + skew.withLock { $0 } }
      func configure(measures: Bool, skewed: Bool) -> (inout SyncConfiguration) -> Void {
        return { configuration in
          configuration.measuresDeliveryDelay = measures
          configuration.clock = skewed ? skewedRead : read
          if let strategy { configuration.mergeStrategies["theme"] = strategy }
          if compressed { configuration.compressedKeys = ["theme"] }
        }
      }
      a = harness.device("A", monitored: ["theme"], configure: configure(measures: aMeasures, skewed: false))
      b = harness.device("B", monitored: ["theme"], configure: configure(measures: bMeasures, skewed: true))
    }

    func send(_ value: PropertyListValue, arrivingAfter seconds: TimeInterval) {
      a.set(value, "theme")
      clock.advance(by: seconds)
      harness.cloud.deliver()
      b.settle()
    }
  }

  @Test func quartilesComeFromBucketsAndNegativeDelaysAreClampedAndCounted() {
    let pair = Pair()
    pair.send(.string("1"), arrivingAfter: 1)
    pair.send(.string("2"), arrivingAfter: 4)
    pair.send(.string("3"), arrivingAfter: 4.2)  // counted in the bucket up to 5 s
    pair.send(.string("4"), arrivingAfter: 11)  // up to 12 s
    pair.skew.withLock { $0 = -30 }  // B's clock is 30 s behind A's
    pair.send(.string("5"), arrivingAfter: 2)
    #expect(pair.b.value("theme") == .string("5"))
    // Delays 0 (clamped), 1, 4, 5, 12: ranks ⌈5/4⌉ = 2, ⌈5/2⌉ = 3, ⌈15/4⌉ = 4.
    #expect(
      pair.b.coordinator.metrics.deliveryDelay
        == SyncMetrics.DelayQuartiles(lower: 1, median: 4, upper: 5, count: 5, clamped: 1))
    // The writer measures nothing of its own writes.
    #expect(pair.a.coordinator.metrics.deliveryDelay == nil)
    // Kept across a relaunch, and summed over days.
    pair.b.relaunch()
    pair.clock.advance(by: 86_400)
    pair.skew.withLock { $0 = 0 }
    pair.send(.string("6"), arrivingAfter: 60)
    #expect(
      pair.b.coordinator.metrics.deliveryDelay
        == SyncMetrics.DelayQuartiles(lower: 1, median: 4, upper: 12, count: 6, clamped: 1))
  }

  @Test func aDeviceThatDoesNotMeasureReadsTimedRecordsAsUsualAndReportsNothing() {
    let pair = Pair(aMeasures: true, bMeasures: false)
    pair.send(.string("dusk"), arrivingAfter: 3)
    #expect(pair.b.value("theme") == .string("dusk"))
    #expect(pair.b.coordinator.metrics.deliveryDelay == nil)
    #expect(pair.b.record("theme")?.content == .value(.string("dusk")))
    #expect(pair.b.coordinator.status.refusedKeys.isEmpty)
  }

  @Test func recordsWithoutTheTimeAreReadAsUsualAndMeasureNothing() {
    let pair = Pair(aMeasures: false, bMeasures: true)
    pair.send(.string("dusk"), arrivingAfter: 3)
    #expect(pair.b.value("theme") == .string("dusk"))
    #expect(pair.b.coordinator.metrics.deliveryDelay == nil)
  }

  @Test func strategyKeysCarryTheTimeToo() {
    let pair = Pair(strategy: .set)
    pair.send(.array([.string("a")]), arrivingAfter: 2)
    pair.send(.array([.string("a"), .string("b")]), arrivingAfter: 8)
    #expect(pair.b.value("theme") == .array([.string("a"), .string("b")]))
    #expect(
      pair.b.coordinator.metrics.deliveryDelay
        == SyncMetrics.DelayQuartiles(lower: 2, median: 2, upper: 8, count: 2, clamped: 0))
  }

  @Test func compressedRecordsCarryItOutsideTheEnvelope() throws {
    let pair = Pair(compressed: true)
    let long = PropertyListValue.string(String(repeating: "dusk and dawn ", count: 200))
    pair.send(long, arrivingAfter: 6)
    #expect(pair.b.value("theme") == long)
    guard case .array(let fields)? = pair.harness.cloud.serverValues["theme"] else {
      Issue.record("no record")
      return
    }
    #expect(fields.first == .string(CompressedRecord.tag))
    #expect(fields.count == 3)
    #expect(
      pair.b.coordinator.metrics.deliveryDelay
        == SyncMetrics.DelayQuartiles(lower: 6, median: 6, upper: 6, count: 1, clamped: 0))
  }

  @Test func theTimeAddsSixBytesOfDataNineAsTheStoreAccountsThem() {
    let record = SyncRecord(generation: 7, origin: "k3f9qa", content: .value(.string("dusk"))).encoded
    let sent = SentTime.appending(Date(timeIntervalSinceReferenceDate: 786_000_000.125), to: record)
    guard case .array(let fields) = sent, case .data(let time)? = fields.last else {
      Issue.record("no time appended")
      return
    }
    #expect(time.count == 6)
    #expect(SentTime.read(sent) == Date(timeIntervalSinceReferenceDate: 786_000_000.125))
    #expect(sent.estimatedBinaryPlistSize - record.estimatedBinaryPlistSize == 9)
    #expect(SimulatedCloud.binaryPlistSize(of: sent) - SimulatedCloud.binaryPlistSize(of: record) == 9)
    #expect(RemoteState(storeValue: sent) == RemoteState(storeValue: record))
  }
}

@Suite("Metrics: updates")
struct MetricsUpdatesTests {
  @Test func updatesYieldTheMetricsThenTheLatestAfterBatchesAndFinishWithTheCoordinator() async {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    var updates = a.coordinator.metricsUpdates.makeAsyncIterator()
    let first = await updates.next()
    #expect(first?.launches == 1)
    #expect(first?.storeWrites == 0)
    // Three batches before the consumer looks again: it gets the latest, once.
    a.set(.string("1"), "theme")
    a.set(.string("2"), "theme")
    a.set(.string("3"), "theme")
    #expect(await updates.next()?.storeWrites == 3)
    // A batch that changes no figure yields nothing; the next that does, yields.
    a.coordinator.sync(keys: ["theme"])
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme"]), to: "A")
    #expect(await updates.next()?.events == [.serverChange: 1])
    a.shutDown()
    #expect(await updates.next() == nil)
  }

  @Test func theFacadeReadsTheSharedCoordinatorsMetrics() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    a.set(.string("dusk"), "theme")
    SharedFacade.using(a.coordinator) {
      #expect(Zephyr.metrics.storeWrites == 1)
      #expect(Zephyr.metrics == a.coordinator.metrics)
    }
  }
}

@Suite("Metrics: saving")
struct MetricsSavingTests {
  @Test func editsAreSavedAtMostOnceAMinuteNeverPerEditAndWhenTheAppMovesToTheBackground() {
    let harness = Harness()
    let clock = TestClock()
    let a = harness.device("A", monitored: ["theme"]) { $0.clock = clock.read }
    let file = a.coordinator.engine.metricsFile
    let today = TestClock.day
    func saved() -> SyncMetrics { file.load().summary(today: today, measuring: false) }
    // The launch is saved by the first operation; three edits within the minute are not.
    a.set(.string("1"), "theme")
    a.set(.string("2"), "theme")
    a.set(.string("3"), "theme")
    #expect(saved().launches == 1)
    #expect(saved().storeWrites == 0)
    clock.advance(by: 60)
    a.set(.string("4"), "theme")
    #expect(saved().storeWrites == 4)
    a.set(.string("5"), "theme")
    #expect(saved().storeWrites == 4)
    a.coordinator.engine.enteredBackground()
    #expect(saved().storeWrites == 5)
    // Never from deinit, which may run under a caller's lock.
    a.set(.string("6"), "theme")
    a.shutDown()
    #expect(saved().storeWrites == 5)
  }
}

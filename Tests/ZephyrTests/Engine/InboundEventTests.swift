import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// What an inbound store event may touch, and what each reason does.
struct InboundEventTests {
  /// A pushes `values`; B (monitoring `monitored`) has downloaded them without an event.
  private func setUp(monitored: [String], values: [String: String]) -> (Harness, TestDevice, TestDevice) {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: monitored)
    for (key, value) in values { a.set(.string(value), key) }
    a.coordinator.sync()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)
    return (harness, a, b)
  }

  @Test func eventsTouchMonitoredKeysOnly() {
    let (harness, _, b) = setUp(monitored: ["theme"], values: ["theme": "dusk", "font": "serif"])
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme", "font"]), to: "B")
    #expect(b.value("theme") == .string("dusk"))
    #expect(b.value("font") == nil)
  }

  @Test func eventWithoutKeysMeansAllMonitoredKeys() {
    let (harness, _, b) = setUp(monitored: ["theme", "font"], values: ["theme": "dusk", "font": "serif", "x": "y"])
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: nil), to: "B")
    #expect(b.value("theme") == .string("dusk"))
    #expect(b.value("font") == .string("serif"))
    #expect(b.value("x") == nil)
  }

  @Test func emptyMonitoredSetDoesNothing() {
    let (harness, _, b) = setUp(monitored: [], values: ["theme": "dusk"])
    let writes = b.store.statistics.writes
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: nil), to: "B")
    harness.cloud.post(ExternalChange(reason: .initialSync, keys: ["theme"]), to: "B")
    #expect(b.value("theme") == nil)
    #expect(b.store.statistics.writes == writes)
  }

  @Test func removingAMonitoredKeyStopsInboundWrites() {
    let (harness, a, b) = setUp(monitored: ["theme"], values: ["theme": "dusk"])
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme"]), to: "B")
    #expect(b.value("theme") == .string("dusk"))

    b.coordinator.removeKeysFromBeingMonitored(keys: "theme")
    #expect(b.coordinator.monitoredKeys.isEmpty)
    a.set(.string("dawn"), "theme")
    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("theme") == .string("dusk"))
  }

  @Test func initialSyncPullsLikeAServerChange() async {
    let (harness, _, b) = setUp(monitored: ["theme"], values: ["theme": "dusk"])
    let recorder = NotificationRecorder(b.coordinator)
    harness.cloud.post(ExternalChange(reason: .initialSync, keys: nil), to: "B")
    #expect(b.value("theme") == .string("dusk"))
    #expect(b.coordinator.status.lastEvent?.reason == .initialSync)
    #expect(await recorder.received().map(\.keys) == [["theme"]])
  }

  @Test func duplicateEventsChangeNothingTwice() async {
    let (harness, _, b) = setUp(monitored: ["theme"], values: ["theme": "dusk"])
    let recorder = NotificationRecorder(b.coordinator)
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme"]), to: "B")
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme"]), to: "B")
    #expect(await recorder.received().map(\.keys) == [["theme"]], "only keys whose value changed are announced")
    #expect(b.store.statistics.writes == 0)
  }

  @Test func quotaViolationIsRecordedAndNotRetried() {
    let (harness, _, b) = setUp(monitored: ["theme"], values: ["theme": "dusk"])
    let writes = b.store.statistics.writes
    harness.cloud.post(ExternalChange(reason: .quotaViolation, keys: nil), to: "B")
    harness.cloud.post(ExternalChange(reason: .quotaViolation, keys: nil), to: "B")
    let status = b.coordinator.status
    #expect(status.lastQuotaViolation != nil)
    #expect(status.lastEvent?.reason == .quotaViolation)
    #expect(b.store.statistics.writes == writes)
    #expect(b.value("theme") == nil, "a quota event applies nothing")
    #expect(b.warnings.contains { $0.contains("quota violation") })
  }

  @Test func accountChangeResetsHistoryRemoteWinsAndLocalOnlyKeysAreUploaded() {
    let harness = Harness()
    let b = harness.device("B", monitored: ["theme", "font", "localOnly"])
    b.set(.string("mine"), "theme")
    b.set(.string("mine"), "font")
    b.coordinator.sync()
    harness.cloud.upload()

    // Another account already holds a theme, written by its own device.
    let other = harness.device("Other", monitored: ["theme"])
    harness.cloud.switchAccount(of: "Other", to: "work")
    other.set(.string("work theme"), "theme")
    other.coordinator.sync()
    harness.cloud.upload()

    b.set(.string("kept"), "localOnly")
    harness.cloud.switchAccount(of: "B", to: "work")
    #expect(b.value("theme") == .string("work theme"), "remote wins conflicts")
    #expect(b.value("font") == .string("mine"), "local-only keys are kept")
    #expect(b.value("localOnly") == .string("kept"))
    harness.cloud.upload()
    let work = harness.cloud.serverValues(account: "work")
    #expect(Set(work.keys) == ["theme", "font", "localOnly"], "and uploaded to the new account")
    #expect(b.coordinator.status.lastAccountChange != nil)
  }

  /// A new install that changes accounts before its own initial download has the new
  /// account's values from the switch: a write made after it is kept by the store, and is
  /// not lost to a later download (seed 297 of the randomized scenarios).
  @Test func aNewInstallsWriteAfterAnAccountSwitchIsKept() {
    let harness = Harness()
    let d = harness.device("D", monitored: ["theme"])
    d.set(.string("cloud"), "theme")
    harness.cloud.upload()
    let a = harness.device("A", monitored: ["theme"], initiallyDownloaded: false)
    harness.cloud.switchAccount(of: "A", to: SimulatedCloud.defaultAccount)
    #expect(a.value("theme") == .string("cloud"))
    a.set(.string("after the switch"), "theme")
    for _ in 0..<2 { harness.round() }
    #expect(harness.values(of: "theme") == ["A": .string("after the switch"), "D": .string("after the switch")])
  }

  @Test func garbageEventsNeverCrashOrDeleteLocalData() {
    let (harness, _, b) = setUp(monitored: ["theme"], values: ["theme": "dusk"])
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["theme"]), to: "B")
    let hugeKeyList = (0..<50_000).map { "k\($0)" } + [String(repeating: "é", count: 100), ""]
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: hugeKeyList), to: "B")
    harness.cloud.post(ExternalChange(reason: .accountChange, keys: ["unknown"]), to: "B")
    harness.cloud.post(ExternalChange(reason: .initialSync, keys: []), to: "B")
    #expect(b.value("theme") == .string("dusk"))
  }
}

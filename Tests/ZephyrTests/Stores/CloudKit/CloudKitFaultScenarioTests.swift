import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Devices with coordinators over `SimulatedCloudKit`, meeting what only CloudKit does:
/// conflicts on send, rejected batches, a full account, a purged or lost zone, crashes
/// between an event and the state save, deleted and re-created keys, sign-out. Each
/// loses nothing.
struct CloudKitFaultScenarioTests {
  private static func harness(_ names: [String] = ["A", "B"], keys: [String] = ["theme", "size"]) -> (
    Harness, [TestDevice]
  ) {
    let harness = Harness(backend: .cloudKit)
    return (harness, names.map { harness.device($0, monitored: keys) })
  }

  @Test func concurrentEditsOfOneKeyConvergeTheFirstUploadWinsTheLoserMerges() {
    let (harness, devices) = Self.harness()
    let (a, b) = (devices[0], devices[1])
    a.set(.string("from A"), "theme")
    b.set(.string("from B"), "theme")
    a.coordinator.sync()
    b.coordinator.sync()
    harness.round()
    #expect(a.value("theme") == b.value("theme"))
    guard case .record(let record)? = harness.cloudKit?.serverValues["theme"].map({ RemoteState(storeValue: $0) })
    else {
      Issue.record("no record on the server")
      return
    }
    #expect(record.content.value == a.value("theme"))
  }

  @Test func concurrentAdditionsToASetKeySurviveAConflictOnSend() {
    let harness = Harness(backend: .cloudKit)
    let (a, b) = (harness.devices(["A", "B"], merging: "tags", by: .set)[0], harness.device("B"))
    a.set(.array([.string("x")]), "tags")
    harness.round()
    a.set(.array([.string("x"), .string("a")]), "tags")
    b.set(.array([.string("x"), .string("b")]), "tags")
    a.coordinator.sync()
    b.coordinator.sync()
    for _ in 0..<3 { harness.round() }
    let expected = Set(["x", "a", "b"].map(PropertyListValue.string))
    #expect(a.value("tags").flatMap { if case .array(let items) = $0 { Set(items) } else { nil } } == expected)
    #expect(b.value("tags") == a.value("tags"))
  }

  /// A save refused because a foreign writer (no Zephyr record) saved the record first is
  /// sent again over the foreign value, naming it: the edit wins, on the device that took
  /// the foreign value too, instead of being replaced by it.
  @Test func aSaveRefusedOverAForeignValueIsSentAgainNamingIt() throws {
    let (harness, devices) = Self.harness()
    let cloudKit = try #require(harness.cloudKit)
    let (a, b) = (devices[0], devices[1])
    a.set(.string("light"), "theme")
    harness.round()
    let foreign = PropertyListValue.string("written by other code")
    cloudKit.setServerValue(foreign, forKey: "theme")
    cloudKit.download(to: "B")
    #expect(b.value("theme") == foreign)
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    cloudKit.upload(from: "A")  // refused: the server holds the foreign value
    for _ in 0..<2 { harness.round() }
    #expect(a.value("theme") == .string("dusk"))
    #expect(b.value("theme") == .string("dusk"))
    guard case .record(let record)? = cloudKit.serverValues["theme"].map({ RemoteState(storeValue: $0) }) else {
      Issue.record("no record on the server")
      return
    }
    #expect(record.content == .value(.string("dusk")))
    #expect(record.madeOver == [ForeignName(of: foreign)])
  }

  @Test func aRejectedBatchIsSentAgain() throws {
    let (harness, devices) = Self.harness()
    let cloudKit = try #require(harness.cloudKit)
    devices[0].set(.string("dusk"), "theme")
    devices[0].set(.integer(14), "size")
    cloudKit.failNextSend(of: "A", with: .batchRequestFailed)
    harness.round()
    harness.round()
    #expect(devices[1].value("theme") == .string("dusk"))
    #expect(devices[1].value("size") == .integer(14))
  }

  @Test func aFullAccountIsReportedHeldAndSentOnceReleased() throws {
    let (harness, devices) = Self.harness()
    let cloudKit = try #require(harness.cloudKit)
    cloudKit.quotaBytes = 0
    devices[0].set(.string("dusk"), "theme")
    harness.round()
    cloudKit.waitForDeliveries()
    #expect(devices[0].coordinator.status.lastQuotaViolation != nil)
    #expect(devices[1].value("theme") == nil)
    let requests = devices[0].cloudKitStore.statistics.requests
    harness.round()
    #expect(devices[0].cloudKitStore.statistics.requests == requests, "no retry loop during the backoff")
    cloudKit.quotaBytes = nil
    cloudKit.advanceClock(by: CloudKitStoreState.initialQuotaBackoff)
    harness.round()
    #expect(devices[1].value("theme") == .string("dusk"))
    #expect(devices[0].value("theme") == .string("dusk"), "the local value was never touched")
  }

  @Test func aLostZoneIsRefilledAndAPurgeKeepsLocalValuesAndSendsNothing() throws {
    let (harness, devices) = Self.harness()
    let cloudKit = try #require(harness.cloudKit)
    devices[0].set(.string("dusk"), "theme")
    harness.round()
    cloudKit.deleteZone(.deleted)
    harness.round()
    #expect(cloudKit.serverValues.count == 1, "refilled from the devices")
    cloudKit.deleteZone(.purged)
    harness.round()
    harness.round()
    #expect(cloudKit.serverValues.isEmpty, "a purge is not sent again")
    for device in devices { #expect(device.value("theme") == .string("dusk"), "local values are kept") }
    for device in devices { device.cloudKitStore.resumeAfterPurge() }
    harness.round()
    #expect(cloudKit.serverValues.count == 1)
  }

  /// DESIGN §14: a zone the user deleted, an encrypted-data reset and a purge follow a
  /// stated policy, and the status says which happened, when, and what the store did.
  @Test(arguments: [
    (SimulatedCloudKit.ZoneDeletion.deleted, StoreReset.Reason.zoneDeleted),
    (.encryptedDataReset, .encryptedDataReset), (.purged, .purged),
  ])
  func theStatusSaysWhenTheServerLostTheZone(deletion: SimulatedCloudKit.ZoneDeletion, reason: StoreReset.Reason)
    throws
  {
    let (harness, devices) = Self.harness()
    let cloudKit = try #require(harness.cloudKit)
    devices[0].set(.string("dusk"), "theme")
    harness.round()
    #expect(devices[0].coordinator.status.lastStoreReset == nil)
    let before = cloudKit.now
    cloudKit.deleteZone(deletion)
    harness.round()
    for device in devices {
      let reset = try #require(device.coordinator.status.lastStoreReset, "\(device.name) says nothing")
      #expect(reset.reason == reason)
      #expect(reset.date >= before)
      #expect(device.coordinator.status.description.contains("store reset"))
      #expect(device.value("theme") == .string("dusk"), "local values are kept")
    }
    #expect(devices[1].cloudKitStore.lastReset?.reason == reason)
  }

  /// A's events in one exchange (send: will, zone, records, state, did; fetch: will,
  /// records, state, did) and a second send: a crash walks through every gap.
  @Test(arguments: 0..<13)
  func aCrashBetweenAnyTwoEventsLosesNothing(eventsBeforeTheCrash: Int) throws {
    let (harness, devices) = Self.harness()
    let cloudKit = try #require(harness.cloudKit)
    let (a, b) = (devices[0], devices[1])
    a.set(.string("dusk"), "theme")
    b.set(.integer(14), "size")
    a.coordinator.sync()
    b.coordinator.sync()
    cloudKit.crash("A", before: .stateSaved, eventsToSkip: eventsBeforeTheCrash)
    cloudKit.upload(from: "B")
    cloudKit.deliver()
    a.set(.string("dawn"), "theme")
    cloudKit.upload(from: "A")
    #expect(a.cloudKitStore.statistics.crashes == 1)
    a.restart()
    for _ in 0..<3 { harness.round() }
    for device in devices {
      #expect(device.value("theme") == .string("dawn"))
      #expect(device.value("size") == .integer(14))
    }
  }

  @Test func aKeyDeletedThenRecreatedReachesOtherDevicesAsRecreated() {
    let (harness, devices) = Self.harness()
    let (a, b) = (devices[0], devices[1])
    a.set(.string("dusk"), "theme")
    harness.round()
    a.remove("theme")
    a.coordinator.sync()
    a.set(.string("dawn"), "theme")
    a.coordinator.sync()
    harness.round()
    #expect(b.value("theme") == .string("dawn"))
  }

  @Test func aSignOutTouchesNoUserDefaultsValueAndSigningBackInConverges() throws {
    let (harness, devices) = Self.harness()
    let cloudKit = try #require(harness.cloudKit)
    devices[0].set(.string("dusk"), "theme")
    harness.round()
    cloudKit.signOut(of: "B")
    cloudKit.waitForDeliveries()
    devices[1].coordinator.sync()
    #expect(devices[1].value("theme") == .string("dusk"))
    cloudKit.switchAccount(of: "B", to: SimulatedCloudKit.defaultAccount)
    harness.round()
    #expect(devices[1].value("theme") == .string("dusk"))
    #expect(cloudKit.serverValues.count == 1)
  }

  @Test func beyondTheKeyValueStoresLimitsEverythingSyncs() {
    let keys = (0..<1_500).map { "item.\($0)" } + ["history"]
    let (harness, devices) = Self.harness(keys: keys)
    let (a, b) = (devices[0], devices[1])
    for index in 0..<1_500 { a.defaults.set(index, forKey: "item.\(index)") }
    a.defaults.set(Data(repeating: 9, count: 900_000), forKey: "history")
    a.defaults.set(Data(repeating: 8, count: 900_000), forKey: "history2")
    a.coordinator.addKeysToBeMonitored(keys: ["history2"])
    b.coordinator.addKeysToBeMonitored(keys: ["history2"])
    a.coordinator.sync()
    harness.round()
    #expect(a.coordinator.status.refusedKeys.isEmpty)
    #expect(b.value("item.1499") == .integer(1_499))
    #expect(b.value("history2") == .data(Data(repeating: 8, count: 900_000)))
    #expect(b.coordinator.status.keyCount == 1_502)
  }
}

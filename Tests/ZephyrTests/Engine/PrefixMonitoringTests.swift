import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Per-item keys under a prefix (`account.v2.<id>`): monitored as they appear, so an item
/// another device adds, changes or deletes is applied without a full `sync()`.
struct PrefixMonitoringTests {
  static let prefix = "account.v2."

  /// A and B, B monitoring the prefix (and `explicit` keys).
  private func devices(explicit: [String] = []) -> (Harness, TestDevice, TestDevice) {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: explicit)
    b.coordinator.addKeysToBeMonitored(prefix: Self.prefix)
    return (harness, a, b)
  }

  @Test(arguments: World.allCases)
  func aNewItemKeyReachesTheOtherDeviceThroughAnInboundEvent(_ world: World) {
    let harness = Harness(world: world)
    let a = harness.device("A")
    let b = harness.device("B")
    b.coordinator.addKeysToBeMonitored(prefix: Self.prefix)
    #expect(b.coordinator.monitoredPrefixes == [Self.prefix])
    #expect(b.coordinator.status.monitoredPrefixes == [Self.prefix])
    #expect(b.coordinator.status.description.contains("monitored prefixes    account.v2.*"))
    a.set(.string("alice"), "account.v2.42")
    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("account.v2.42") == .string("alice"))
    #expect(b.coordinator.status.largestKeys.map(\.key).contains("account.v2.42"), "counted in the key budget")
  }

  @Test func changesAndDeletesOfItemKeysArriveToo() {
    let (harness, a, b) = devices()
    a.set(.string("alice"), "account.v2.1")
    a.set(.string("bob"), "account.v2.2")
    a.coordinator.sync()
    harness.cloud.deliver()
    a.set(.string("alice2"), "account.v2.1")
    a.remove("account.v2.2")
    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("account.v2.1") == .string("alice2"))
    #expect(b.value("account.v2.2") == nil)
  }

  @Test func keysOutsideThePrefixAreNotApplied() {
    let (harness, a, b) = devices()
    for key in ["account.v2.7", "account.v2", "account.v3.7", "xaccount.v2.7"] { a.set(.string(key), key) }
    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("account.v2.7") == .string("account.v2.7"))
    #expect(b.value("account.v2") == nil)
    #expect(b.value("account.v3.7") == nil)
    #expect(b.value("xaccount.v2.7") == nil)
  }

  @Test func removingThePrefixStopsInboundWrites() {
    let (harness, a, b) = devices()
    a.set(.string("alice"), "account.v2.1")
    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("account.v2.1") == .string("alice"))

    b.coordinator.removeKeysFromBeingMonitored(prefix: Self.prefix)
    #expect(b.coordinator.monitoredPrefixes.isEmpty)
    a.set(.string("alice2"), "account.v2.1")
    a.set(.string("carol"), "account.v2.3")
    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("account.v2.1") == .string("alice"))
    #expect(b.value("account.v2.3") == nil)
    b.coordinator.sync()
    #expect(b.value("account.v2.3") == .string("carol"), "sync() still covers the domain")
  }

  @Test func prefixAndExplicitKeysCombine() {
    let (harness, a, b) = devices(explicit: ["theme"])
    a.set(.string("dusk"), "theme")
    a.set(.string("alice"), "account.v2.1")
    a.set(.string("serif"), "font")
    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("theme") == .string("dusk"))
    #expect(b.value("account.v2.1") == .string("alice"))
    #expect(b.value("font") == nil)

    b.coordinator.removeKeysFromBeingMonitored(prefix: Self.prefix)
    a.set(.string("dawn"), "theme")
    a.set(.string("alice2"), "account.v2.1")
    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("theme") == .string("dawn"), "the explicit key stays monitored")
    #expect(b.value("account.v2.1") == .string("alice"))
  }

  @Test func anEventWithoutKeysCoversTheKeysUnderThePrefix() {
    let (harness, a, b) = devices()
    a.set(.string("alice"), "account.v2.1")
    a.set(.string("serif"), "font")
    a.coordinator.sync()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: nil), to: "B")
    #expect(b.value("account.v2.1") == .string("alice"))
    #expect(b.value("font") == nil)
  }

  @Test func aLocalEditOfAnItemKeyIsPushedByItself() {
    // Apple's world: the write announces itself, and the monitored edit is pushed.
    let (harness, a, b) = devices()
    b.set(.string("dave"), "account.v2.4")
    harness.cloud.deliver()
    #expect(harness.cloud.serverValues["account.v2.4"] != nil)
    #expect(a.value("account.v2.4") == nil, "A monitors nothing")
    a.coordinator.sync()
    #expect(a.value("account.v2.4") == .string("dave"))
  }

  @Test func anOverlongItemKeyIsRefusedByName() {
    let (harness, _, b) = devices()
    let long = Self.prefix + String(repeating: "9", count: 60)
    harness.cloud.setServerValue(.string("x"), forKey: "account.v2.1")  // a foreign write
    harness.cloud.download(to: "B", notify: false)
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: [long, "account.v2.1"]), to: "B")
    #expect(b.value("account.v2.1") == .string("x"))
    #expect(b.coordinator.status.refusedKeys[long] == .keyTooLong(bytes: 71, limit: 64))
  }

  @Test func theFacadeMonitorsPrefixes() {
    let harness = Harness()
    let b = harness.device("B")
    SharedFacade.using(b.coordinator) {
      Zephyr.addKeysToBeMonitored(prefix: Self.prefix)
      #expect(b.coordinator.monitoredPrefixes == [Self.prefix])
      Zephyr.removeKeysFromBeingMonitored(prefix: Self.prefix)
      #expect(b.coordinator.monitoredPrefixes.isEmpty)
    }
  }

  @Test func setUserDefaultsSuiteKeepsTheMonitoredPrefixes() {
    let harness = Harness()
    let a = harness.device("A")
    let group = harness.device("group")
    a.coordinator.addKeysToBeMonitored(prefix: Self.prefix)
    SharedFacade.using(a.coordinator) {
      Zephyr.setUserDefaultsSuite(to: group.defaults, suiteName: group.suiteName)
      #expect(Zephyr.shared.monitoredPrefixes == [Self.prefix])
    }
  }

  /// Prefixes added and removed on many threads while items are written and delivered:
  /// no crash, no race (run it under `--sanitize=thread`), and the devices converge.
  @Test func prefixesChangingDuringDeliveriesAreSafe() {
    let harness = Harness()
    let devices = ["A", "B", "C"].map { harness.device($0) }
    let coordinators = devices.map(\.coordinator)
    let suites = devices.map(\.suiteName)
    let cloud = harness.cloud
    DispatchQueue.concurrentPerform(iterations: 6) { thread in
      for step in 0..<30 {
        let device = (thread + step) % coordinators.count
        let key = "account.v2.\((thread * 5 + step) % 7)"
        switch (thread + step) % 5 {
        case 0: UserDefaults(suiteName: suites[device])?.set("t\(thread)s\(step)", forKey: key)
        case 1: coordinators[device].addKeysToBeMonitored(prefix: Self.prefix)
        case 2: coordinators[device].removeKeysFromBeingMonitored(prefix: Self.prefix)
        case 3: thread == 0 ? cloud.deliver() : cloud.download(to: ["A", "B", "C"][device])
        default: _ = coordinators[device].status.description
        }
      }
    }
    for coordinator in coordinators { coordinator.addKeysToBeMonitored(prefix: Self.prefix) }
    for _ in 0..<3 { harness.round() }
    for key in (0..<7).map({ "account.v2.\($0)" }) {
      #expect(Set(harness.values(of: key).values).count == 1, "\(key) differs")
    }
  }
}

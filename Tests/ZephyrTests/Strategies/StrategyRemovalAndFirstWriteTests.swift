import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A strategy key's removal or lowering made after every device showed the merge sticks,
/// and a device with no history (a new install, a lost ledger, an extension) adds to the
/// cloud's state, never erasing it.
struct StrategyRemovalAndFirstWriteTests {
  private static let favorites = SyncKey<[String]>("fav", default: [], merge: .set)

  private func rounds(_ harness: Harness, _ count: Int) {
    for _ in 0..<count { harness.round() }
  }

  private func elements(_ device: TestDevice, _ key: String) -> Set<PropertyListValue> {
    PropertyListValue.elements(of: device.value(key)) ?? []
  }

  // MARK: 1. A removal made after every device showed the merge sticks

  @Test(arguments: Backend.allCases)
  func aSetRemovalMadeAfterEveryDeviceShowedTheMergeSticks(backend: Backend) {
    let harness = Harness(backend: backend)
    let devices = harness.devices(["A", "B", "C"], merging: "fav", by: .set)
    let (a, b, c) = (devices[0], devices[1], devices[2])
    a.set(PropertyListValue.strings("base"), "fav")
    rounds(harness, 2)
    a.set(PropertyListValue.strings("base", "x"), "fav")
    b.set(PropertyListValue.strings("base", "x"), "fav")
    rounds(harness, 2)
    #expect(devices.allSatisfy { elements($0, "fav") == [.string("base"), .string("x")] })
    c.set(PropertyListValue.strings("base"), "fav")
    rounds(harness, 3)
    for device in devices { #expect(elements(device, "fav") == [.string("base")], "\(device.name)") }
  }

  @Test(arguments: Backend.allCases)
  func aMaximumLoweredAfterEveryDeviceShowedItStaysLowered(backend: Backend) {
    let harness = Harness(backend: backend)
    let devices = harness.devices(["A", "B", "C"], merging: "score", by: .max)
    a(devices).set(.integer(1), "score")
    rounds(harness, 2)
    for (device, score) in zip(devices, [100, 101, 102]) { device.set(.integer(Int64(score)), "score") }
    rounds(harness, 2)
    #expect(harness.values(of: "score").values.allSatisfy { $0 == .integer(102) })
    devices[2].set(.integer(5), "score")
    rounds(harness, 3)
    #expect(harness.values(of: "score").values.allSatisfy { $0 == .integer(5) }, "\(harness.values(of: "score"))")
  }

  @Test(arguments: Backend.allCases)
  func anEntryRemovedAfterEveryDeviceShowedItStaysRemoved(backend: Backend) {
    let harness = Harness(backend: backend)
    let devices = harness.devices(["A", "B", "C"], merging: "map", by: .dictionary)
    a(devices).set(.dictionary(["base": .integer(1)]), "map")
    rounds(harness, 2)
    devices[0].set(.dictionary(["base": .integer(1), "x": .integer(2)]), "map")
    devices[1].set(.dictionary(["base": .integer(1), "x": .integer(2)]), "map")
    rounds(harness, 2)
    devices[2].set(.dictionary(["base": .integer(1)]), "map")
    rounds(harness, 3)
    #expect(harness.values(of: "map").values.allSatisfy { $0 == .dictionary(["base": .integer(1)]) })
  }

  private func a(_ devices: [TestDevice]) -> TestDevice { devices[0] }

  // MARK: 2. A first write with no history adds to the cloud's state

  @Test(arguments: Backend.allCases)
  func aNewInstallsFirstTypedWriteAddsToTheCloudsSet(backend: Backend) {
    let harness = Harness(backend: backend)
    let a = harness.device("A")
    a.coordinator[Self.favorites] = ["a", "b"]
    a.settle()
    harness.driver.upload()
    let c = harness.device("C", initiallyDownloaded: false)
    harness.driver.download(to: "C", notify: true)
    // Its first use is this set (a read first reconciles the key before it returns: see
    // NewInstallFirstEditTests for a set made from that read).
    c.coordinator[Self.favorites] = ["c"]
    c.settle()
    rounds(harness, 3)
    for device in [a, c] {
      #expect(Set(device.coordinator[Self.favorites]) == ["a", "b", "c"], "\(device.name)")
    }
  }

  @Test(arguments: Backend.allCases)
  func aFirstTypedAppendAfterALostLedgerKeepsWhatAnotherDeviceAdded(backend: Backend) throws {
    let harness = Harness(backend: backend)
    let (a, b) = (harness.device("A"), harness.device("B"))
    a.coordinator[Self.favorites] = ["a"]
    a.settle()
    rounds(harness, 2)
    a.settle()
    try FileManager.default.removeItem(at: LedgerFile(directory: a.ledgerDirectory, domainName: a.suiteName).url)
    b.coordinator[Self.favorites] = b.coordinator[Self.favorites] + ["b"]
    b.settle()
    harness.driver.upload()
    harness.driver.download(to: "A", notify: false)  // B's add reached A's store, its event did not
    a.restart()
    // A's first use is this set of what it showed before (a read first would schedule a
    // reconcile that may pull B's add before the set replaces what was read).
    a.coordinator[Self.favorites] = ["a", "z"]
    a.settle()
    rounds(harness, 3)
    for device in [a, b] {
      #expect(Set(device.coordinator[Self.favorites]) == ["a", "b", "z"], "\(device.name)")
    }
  }

  // MARK: 3. A strategy is known before the key's first use

  /// Both devices add a favorite offline and quit; at the next launch `sync()` runs before
  /// anything uses the typed key (no strategy configured): the record's strategy merges.
  @Test(arguments: Backend.allCases)
  func aSyncBeforeTheKeysFirstUseMergesByTheRecordsStrategy(backend: Backend) {
    let harness = Harness(backend: backend)
    let (a, b) = (harness.device("A"), harness.device("B"))
    a.coordinator[Self.favorites] = ["home"]
    a.settle()
    rounds(harness, 2)
    #expect(b.coordinator[Self.favorites] == ["home"])
    b.settle()
    a.coordinator[Self.favorites] = ["home", "work"]
    b.coordinator[Self.favorites] = ["home", "gym"]
    for device in [a, b] {
      device.settle()
      device.restart()
    }
    rounds(harness, 3)
    for device in [a, b] {
      #expect(elements(device, "fav") == [.string("home"), .string("work"), .string("gym")], "\(device.name)")
    }
    #expect(!a.debugLines.contains { $0.contains("remote wins") })
  }

  // MARK: 5. Zephyr 5 callers keep their streams

  /// `Zephyr.sync(keys:userDefaults:suiteName:)` with a new `UserDefaults` instance of the
  /// suite already in use keeps the shared coordinator: suites compare by name.
  @Test func aNewInstanceOfTheSuiteInUseKeepsTheSharedCoordinator() throws {
    let name = "zephyr-tests.facade.\(UUID().uuidString.prefix(8))"
    let first = try #require(AppleFaithfulDefaults(suiteName: name))
    defer { first.removePersistentDomain(forName: name) }
    try SharedFacade.withoutShared {
      Zephyr.setUserDefaultsSuite(to: first, suiteName: name)
      let shared = Zephyr.shared
      let second = try #require(AppleFaithfulDefaults(suiteName: name))
      Zephyr.sync(keys: ["theme"], userDefaults: second, suiteName: name)
      #expect(Zephyr.shared === shared)
    }
  }

  // MARK: An app and its extension given one ledger folder

  /// An app and its widget given the same `ledgerDirectory` (an app-group container) keep
  /// a ledger and a device id each, so neither overwrites the other's history or writes
  /// under its name; an edit of the app's reaches the cloud through the widget's sync and
  /// is never undone by it.
  @Test(arguments: Backend.allCases)
  func anAppAndItsExtensionGivenOneLedgerFolderKeepTheirOwnHistory(backend: Backend) {
    let harness = Harness(world: .linuxPlain, backend: backend)
    let folder = harness.ledgerDirectory.appendingPathComponent("group-container")
    let configure: (String) -> (inout SyncConfiguration) -> Void = { process in
      { configuration in
        configuration.ledgerDirectory = folder
        configuration.processIdentity = process
        configuration.deviceID = nil
      }
    }
    let app = harness.device("App", monitored: ["theme", "fav"], configure: configure("app"))
    let widget = harness.device("Widget", monitored: ["theme", "fav"], sharing: "App", configure: configure("widget"))
    let other = harness.device("Other", monitored: ["theme", "fav"])
    #expect(app.coordinator.engine.ledgerFile.url != widget.coordinator.engine.ledgerFile.url)
    #expect(app.coordinator.deviceID != widget.coordinator.deviceID)
    app.coordinator[Self.favorites] = ["home"]
    app.set(.string("dark"), "theme")
    app.coordinator.sync()
    widget.coordinator.sync()
    rounds(harness, 1)
    // The app edits after its last sync; nothing announces it in this world.
    app.set(.string("light"), "theme")
    app.defaults.set(["home", "work"], forKey: "fav")
    widget.restart()
    widget.coordinator.sync()
    rounds(harness, 3)
    #expect(harness.values(of: "theme").values.allSatisfy { $0 == .string("light") }, "\(harness.values(of: "theme"))")
    for device in [app, widget, other] {
      #expect(elements(device, "fav") == [.string("home"), .string("work")], "\(device.name)")
    }
  }

  // MARK: A key that merged without a strategy

  /// A last-writer-wins record (`z1`) under a key now merged by `.set` (the app gave the
  /// key a strategy) is read as its writer's write, upgraded in place to a state record,
  /// and merges with what devices do next.
  @Test(arguments: Backend.allCases)
  func aLastWriterWinsRecordIsUpgradedInPlaceAndLosesNothing(backend: Backend) {
    let harness = Harness(backend: backend)
    let devices = harness.devices(["A", "B"], merging: "fav", by: .set)
    let (a, b) = (devices[0], devices[1])
    let old = SyncRecord(generation: 5, origin: "O", content: .value(PropertyListValue.strings("a", "b")))
    harness.driver.setServerValue(old.encoded, forKey: "fav")
    rounds(harness, 1)
    guard case .replica(let upgraded) = RemoteState(storeValue: harness.driver.serverValues["fav"]) else {
      Issue.record("not upgraded: \(harness.driver.serverValues["fav"]?.logDescription ?? "nil")")
      return
    }
    #expect(upgraded.state.context.includes(old.stamp))
    a.set(PropertyListValue.strings("a", "b", "c"), "fav")
    b.set(PropertyListValue.strings("b"), "fav")
    rounds(harness, 3)
    for device in devices { #expect(elements(device, "fav") == [.string("b"), .string("c")], "\(device.name)") }
  }
}

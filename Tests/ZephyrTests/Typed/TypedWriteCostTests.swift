import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A `UserDefaults` that announces its writes as Apple's does (synchronously, on the
/// writing thread) and counts the calls that read the whole persistent domain.
private final class CountingDefaults: UserDefaults {
  let domainReads = Locked(0)
  /// `object(forKey:)` calls, by key.
  let keyReads = Locked<[String: Int]>([:])

  override func object(forKey defaultName: String) -> Any? {
    keyReads.withLock { $0[defaultName, default: 0] += 1 }
    return super.object(forKey: defaultName)
  }

  override func persistentDomain(forName domainName: String) -> [String: Any]? {
    domainReads.withLock { $0 += 1 }
    return super.persistentDomain(forName: domainName)
  }

  override func dictionaryRepresentation() -> [String: Any] {
    domainReads.withLock { $0 += 1 }
    return super.dictionaryRepresentation()
  }

  override func set(_ value: Any?, forKey defaultName: String) {
    super.set(value, forKey: defaultName)
    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
  }

  override func removeObject(forKey defaultName: String) {
    super.removeObject(forKey: defaultName)
    NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
  }
}

/// What typed keys cost: a set makes one store write, one `synchronize()` per batch, and
/// no read of the domain, however many keys are synced; a get is one `object(forKey:)`.
struct TypedWriteCostTests {
  /// A device with `count` other keys synced and monitored, on a counting suite.
  private struct Setup {
    let defaults: CountingDefaults
    let suiteName: String
    let cloud: SimulatedCloud
    let store: SimulatedDevice
    let coordinator: SyncCoordinator
    let ledgers: URL

    init(otherKeys count: Int) throws {
      suiteName = "zephyr-tests.typed-cost.\(UUID().uuidString.prefix(8))"
      defaults = try #require(CountingDefaults(suiteName: suiteName))
      ledgers = FileManager.default.temporaryDirectory.appendingPathComponent(suiteName)
      cloud = SimulatedCloud(delivery: .callingThread)
      store = cloud.device("A", initiallyDownloaded: true)
      coordinator = SyncCoordinator(
        defaults: defaults, suiteName: suiteName, store: store,
        // One synchronize() per batch that wrote (no interval): what the tests count.
        configuration: SyncConfiguration(
          deviceID: "A", synchronizeInterval: 0, logHandler: { _ in }, ledgerDirectory: ledgers))
      let others = (0..<count).map { "other.\($0)" }
      for (index, key) in others.enumerated() { defaults.set(index, forKey: key) }
      coordinator.waitForPendingLocalEdits()
      coordinator.addKeysToBeMonitored(keys: others)
      coordinator.sync()
    }

    func tearDown() {
      defaults.removePersistentDomain(forName: suiteName)
      try? FileManager.default.removeItem(at: ledgers)
    }
  }

  @Test func aTypedSetWritesOneRecordAndReadsNoDomainWithAThousandOtherKeys() throws {
    let setup = try Setup(otherKeys: 1_000)
    defer { setup.tearDown() }
    let before = setup.store.statistics
    setup.defaults.domainReads.withLock { $0 = 0 }

    setup.coordinator[Keys.theme] = "dark"
    setup.coordinator.waitForPendingLocalEdits()

    #expect(setup.store.statistics.writes - before.writes == 1)
    #expect(setup.store.statistics.synchronizeCalls - before.synchronizeCalls == 1)
    #expect(setup.defaults.domainReads.withLock { $0 } == 0, "the typed set read the whole domain")
    guard case .record(let record) = RemoteState(storeValue: setup.store.value(forKey: "theme")) else {
      Issue.record("no record for theme")
      return
    }
    #expect(record.content == .value(.string("dark")))
  }

  @Test func setsInARowArePushedAsOneBatchWithOneSynchronize() throws {
    let setup = try Setup(otherKeys: 10)
    defer { setup.tearDown() }
    let before = setup.store.statistics
    // The local-edit queue is busy (suspended) while the app makes four sets.
    setup.coordinator.engine.localEditQueue.suspend()
    setup.coordinator[Keys.theme] = "dark"
    setup.coordinator[Keys.count] = 1
    setup.coordinator[Keys.count] = 2
    setup.coordinator[Keys.flag] = true
    setup.coordinator.engine.localEditQueue.resume()
    setup.coordinator.waitForPendingLocalEdits()

    #expect(setup.store.statistics.writes - before.writes == 3, "one record per key, the last value of each")
    #expect(setup.store.statistics.synchronizeCalls - before.synchronizeCalls == 1)
    // One record of the last value, numbered above the other keys' g1 (one Lamport clock).
    #expect(
      setup.store.value(forKey: "count").map { RemoteState(storeValue: $0) }
        == .record(SyncRecord(generation: 2, origin: "A", content: .value(.integer(2)))))
  }

  @Test func aTypedSetIsNotTakenForAnUnknownEdit() throws {
    let setup = try Setup(otherKeys: 10)
    defer { setup.tearDown() }
    setup.defaults.domainReads.withLock { $0 = 0 }
    setup.coordinator[Keys.theme] = "dark"
    setup.coordinator.waitForPendingLocalEdits()
    #expect(setup.defaults.domainReads.withLock { $0 } == 0)

    // A plain write through the same instance names no key: that one is diffed.
    setup.defaults.set("plain", forKey: "other.3")
    setup.coordinator.waitForPendingLocalEdits()
    #expect(setup.defaults.domainReads.withLock { $0 } == 1)
  }

  /// Reads that used to be confirmed against the whole domain: a value written through
  /// plain `UserDefaults`, a registered default, a key too long to sync.
  @Test func tenTypedGetsReadNoDomainWithAThousandOtherKeys() throws {
    let setup = try Setup(otherKeys: 1_000)
    defer { setup.tearDown() }
    let registeredName = "registered.\(UUID().uuidString.prefix(8))"  // registrations are process-wide
    let plain = SyncKey<String>("plain", default: "")
    let registered = SyncKey<String>(registeredName, default: "key default")
    let refused = SyncKey<String>(String(repeating: "r", count: 65), default: "")
    setup.defaults.set("written plainly", forKey: plain.name)
    setup.defaults.register(defaults: [registeredName: "registered"])
    setup.defaults.set("long", forKey: refused.name)
    let keys = [plain, registered, refused]
    for key in keys { _ = setup.coordinator[key] }  // first uses, and the reconciles they schedule
    setup.coordinator.waitForPendingLocalEdits()
    setup.defaults.domainReads.withLock { $0 = 0 }
    setup.defaults.keyReads.withLock { $0 = [:] }

    for _ in 0..<10 {
      for key in keys { _ = setup.coordinator[key] }
    }

    #expect(setup.defaults.domainReads.withLock { $0 } == 0, "a get read the whole domain")
    #expect(setup.defaults.keyReads.withLock { $0 } == [plain.name: 10, registeredName: 10, refused.name: 10])
    #expect(setup.coordinator[plain] == "written plainly")
    #expect(setup.coordinator[registered] == "registered")
    #expect(setup.coordinator[refused] == "long")
  }

  /// The store holds a value this device never had (its event was missed): the key's
  /// first use pulls it, reading that key only.
  @Test func aFirstUseReconcilesItsKeyWithoutReadingTheDomain() throws {
    let setup = try Setup(otherKeys: 1_000)
    defer { setup.tearDown() }
    let record = SyncRecord(generation: 9, origin: "B", content: .value(.string("dusk")))
    setup.cloud.setServerValue(record.encoded, forKey: "theme")
    setup.cloud.download(to: "A", notify: false)
    let before = setup.store.statistics
    setup.defaults.domainReads.withLock { $0 = 0 }

    _ = setup.coordinator[Keys.theme]
    setup.coordinator.waitForPendingLocalEdits()

    #expect(setup.coordinator[Keys.theme] == "dusk")
    #expect(setup.defaults.domainReads.withLock { $0 } == 0, "the first use read the whole domain")
    #expect(setup.store.statistics.writes == before.writes, "a pull writes nothing to the store")
  }

  @Test func aTypedSetReadsNothingBackUnlessAStreamFollowsTheKey() throws {
    let setup = try Setup(otherKeys: 10)
    defer { setup.tearDown() }
    setup.coordinator[Keys.theme] = "dark"
    setup.coordinator.waitForPendingLocalEdits()
    #expect(setup.defaults.keyReads.withLock { $0["theme"] } == nil, "no stream follows theme")

    let stream = setup.coordinator.changes(of: Keys.theme)
    setup.defaults.keyReads.withLock { $0 = [:] }
    setup.coordinator[Keys.theme] = "dusk"
    setup.coordinator.waitForPendingLocalEdits()
    // Read to be delivered after the set, and again after its push (which yields nothing).
    #expect(setup.defaults.keyReads.withLock { $0["theme"] } == 2)
    _ = stream
  }
}

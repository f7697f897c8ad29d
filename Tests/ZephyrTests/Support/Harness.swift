import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Which Foundation the harness emulates.
enum World: Sendable, CaseIterable, CustomStringConvertible {
  /// Apple's documented behaviour (see "The Apple-faithful world" in
  /// TestingWithSimulatedCloud.md), the default: every suite is an
  /// `AppleFaithfulDefaults`, which posts `didChangeNotification` synchronously inside each
  /// write on the writing thread, and the cloud delivers events on its own thread.
  case apple
  /// What swift-corelibs-foundation shows: plain `UserDefaults` that announce nothing, and
  /// events delivered on the caller's thread.
  case linuxPlain

  var description: String { self == .apple ? "apple" : "linux-plain" }
}

/// Devices on one `SimulatedCloud`, each with its own real `UserDefaults` suite, ledger
/// folder and coordinator. Everything it created is removed when it is released.
final class Harness {
  let world: World
  /// The key-value store's simulation (used by every device unless ``backend`` is
  /// ``Backend/cloudKit``).
  let cloud: SimulatedCloud
  /// Which simulated store the devices use.
  let backend: Backend
  /// CloudKit's simulation, for ``Backend/cloudKit``.
  let cloudKit: SimulatedCloudKit?
  /// The simulated store the devices use, whichever it is.
  var driver: any TestCloud { cloudKit ?? cloud }
  let ledgerDirectory: URL
  private let prefix: String
  private(set) var devices: [String: TestDevice] = [:]
  /// Names this test to the ``Watchdog`` while the harness lives.
  private let watched = Watchdog.watch()

  /// - Parameters:
  ///   - suitePrefix: Names the suites `<suitePrefix>.<device>` instead of after a fresh
  ///     prefix. Foundation caches every suite a process opens and walks them all on each
  ///     `synchronize()`, so tests that create thousands of harnesses reuse names from a
  ///     ``SuitePool``.
  ///   - ledgerRoot: Where the ledger folder goes; the temporary directory by default.
  ///   - world: Apple's documented Foundation (the default) or Linux's plain one.
  ///   - backend: The simulated store the devices use: the key-value store's (the
  ///     default) or CloudKit's.
  init(
    limits: StoreLimits = .iCloud, suitePrefix: String? = nil, ledgerRoot: URL? = nil, world: World = .apple,
    backend: Backend = .keyValue
  ) {
    let unique = "zephyr-tests.\(UUID().uuidString.prefix(8))"
    prefix = suitePrefix ?? unique
    self.world = world
    self.backend = backend
    let delivery: SimulatedCloud.Delivery = world == .apple ? .storeThread : .callingThread
    cloud = SimulatedCloud(limits: limits, delivery: delivery)
    cloudKit = backend == .cloudKit ? SimulatedCloudKit(delivery: delivery) : nil
    ledgerDirectory = (ledgerRoot ?? FileManager.default.temporaryDirectory)
      .appendingPathComponent(unique, isDirectory: true)
  }

  deinit {
    // Coordinators first: a live one would take the removal for a reset and write back.
    driver.waitForDeliveries()
    for device in devices.values { device.shutDown() }
    for device in devices.values { device.defaults.removePersistentDomain(forName: device.suiteName) }
    try? FileManager.default.removeItem(at: ledgerDirectory)
  }

  /// The device called `name`, created with `monitored` keys on first use.
  ///   - initiallyDownloaded: Whether the device's store had its initial download before
  ///     the app launched (`true`, an existing install); `false` models a new install.
  ///   - sharing: Another device whose suite and store this one shares, as an app
  ///     extension shares its app's app-group suite from its own process: its own
  ///     instance of the suite, its own ledger folder, the same store.
  ///   - opening: Opens the device's suite by name, instead of the world's `UserDefaults`.
  @discardableResult
  func device(
    _ name: String, monitored: [String] = [], initiallyDownloaded: Bool = true, sharing: String? = nil,
    configure: @escaping (inout SyncConfiguration) -> Void = { _ in }, opening: ((String) -> UserDefaults?)? = nil
  ) -> TestDevice {
    if let device = devices[name] { return device }
    let suiteName = "\(prefix).\(sharing ?? name)"
    let opened =
      opening?(suiteName)
      ?? (world == .apple ? AppleFaithfulDefaults(suiteName: suiteName) : UserDefaults(suiteName: suiteName))
    guard let defaults = opened else {
      preconditionFailure("cannot open suite \(suiteName)")
    }
    let configureShared: (inout SyncConfiguration) -> Void = { configuration in
      configure(&configuration)
      if sharing != nil { configuration.sharedByProcesses = true }
    }
    let device = TestDevice(
      name: name, suiteName: suiteName, defaults: defaults,
      store: driver.testStore(sharing ?? name, initiallyDownloaded: initiallyDownloaded),
      ledgerDirectory: sharing == nil ? ledgerDirectory : ledgerDirectory.appendingPathComponent(name),
      configure: configureShared)
    device.coordinator.addKeysToBeMonitored(keys: monitored)
    devices[name] = device
    return device
  }

  /// One round of "deliver; every device syncs; deliver".
  /// Devices that monitor `key` and merge it by `strategy`, in the order named.
  func devices(_ names: [String], merging key: String, by strategy: MergeStrategy) -> [TestDevice] {
    let configure: (inout SyncConfiguration) -> Void = { $0.mergeStrategies[key] = strategy }
    return names.map { device($0, monitored: [key], configure: configure) }
  }

  func round() {
    driver.deliver()
    for name in devices.keys.sorted() { devices[name]?.coordinator.sync() }
    driver.deliver()
  }

  /// The devices' values of `key`, by device name.
  func values(of key: String) -> [String: PropertyListValue?] {
    devices.mapValues { $0.value(key) }
  }
}

/// One device: a suite, a coordinator, and what the coordinator logged.
final class TestDevice {
  let name: String
  let suiteName: String
  let defaults: UserDefaults
  /// The device's store, whichever simulation it belongs to.
  let syncStore: any TestStore
  let ledgerDirectory: URL
  private var current: SyncCoordinator?
  let logs = Locked<[LogMessage]>([])
  private let configure: (inout SyncConfiguration) -> Void

  init(
    name: String, suiteName: String, defaults: UserDefaults, store: any TestStore, ledgerDirectory: URL,
    configure: @escaping (inout SyncConfiguration) -> Void
  ) {
    self.name = name
    self.suiteName = suiteName
    self.defaults = defaults
    self.syncStore = store
    self.ledgerDirectory = ledgerDirectory
    self.configure = configure
    current = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: store,
      configuration: Self.configuration(name: name, ledgerDirectory: ledgerDirectory, logs: logs, configure: configure))
  }

  private static func configuration(
    name: String, ledgerDirectory: URL, logs: Locked<[LogMessage]>, configure: (inout SyncConfiguration) -> Void
  ) -> SyncConfiguration {
    var configuration = SyncConfiguration(
      deviceID: name, debugEnabled: true,
      logHandler: { message in logs.withLock { $0.append(message) } }, ledgerDirectory: ledgerDirectory)
    configure(&configuration)
    return configuration
  }

  /// An app relaunch: a new coordinator over the same suite, store and ledger; the old
  /// one is released. Monitored keys are set again, as an app does at launch.
  func restart() {
    let monitored = coordinator.monitoredKeys
    current = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: syncStore,
      configuration: Self.configuration(name: name, ledgerDirectory: ledgerDirectory, logs: logs, configure: configure))
    coordinator.addKeysToBeMonitored(keys: Array(monitored))
  }

  /// The device's store on the key-value store's simulation (``Backend/keyValue``).
  var store: SimulatedDevice {
    guard let device = syncStore as? SimulatedDevice else { preconditionFailure("\(name) is not on SimulatedCloud") }
    return device
  }

  /// The device's store on CloudKit's simulation (``Backend/cloudKit``).
  var cloudKitStore: SimulatedCloudKitDevice {
    guard let device = syncStore as? SimulatedCloudKitDevice else {
      preconditionFailure("\(name) is not on SimulatedCloudKit")
    }
    return device
  }

  /// An app relaunch as the process sees it: the app moves to the background (what the
  /// coordinator keeps for later, such as metrics, is saved then) and ends; then a new
  /// coordinator starts over the same suite, store and ledger.
  func relaunch() {
    let monitored = coordinator.monitoredKeys
    coordinator.waitForPendingLocalEdits()
    coordinator.engine.enteredBackground()
    shutDown()
    current = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: syncStore,
      configuration: Self.configuration(name: name, ledgerDirectory: ledgerDirectory, logs: logs, configure: configure))
    coordinator.addKeysToBeMonitored(keys: Array(monitored))
  }

  /// The device's coordinator; there is always one until ``shutDown()``.
  var coordinator: SyncCoordinator {
    guard let current else { preconditionFailure("device \(name) was shut down") }
    return current
  }

  /// Releases the coordinator, after letting its scheduled work finish.
  func shutDown() {
    current?.waitForPendingLocalEdits()
    current = nil
  }

  /// Sets a value as the app would. In the Apple world the write announces itself and the
  /// coordinator pushes it; this waits for that push, so that tests stay deterministic.
  func set(_ value: PropertyListValue, _ key: String) {
    defaults.set(value.foundationValue, forKey: key)
    settle()
  }

  /// Removes a value as the app would; see ``set(_:_:)``.
  func remove(_ key: String) {
    defaults.removeObject(forKey: key)
    settle()
  }

  /// Waits for the push a local edit scheduled, if any (none in the Linux-plain world).
  func settle() {
    current?.waitForPendingLocalEdits()
  }

  /// The key's value in the suite's persistent domain.
  func value(_ key: String) -> PropertyListValue? {
    (defaults.persistentDomain(forName: suiteName)?[key]).flatMap(PropertyListValue.init(bridging:))
  }

  /// What the store holds for `key`, decoded.
  func record(_ key: String) -> SyncRecord? {
    if case .record(let record) = RemoteState(storeValue: syncStore.value(forKey: key)) { return record }
    return nil
  }

  var warnings: [String] {
    logs.withLock { $0.filter { $0.level == .warning }.map(\.text) }
  }

  var debugLines: [String] {
    logs.withLock { $0.map(\.text) }
  }
}

/// Collects `keysDidChangeOnCloudNotification` posts for one coordinator, with the thread
/// each arrived on.
final class NotificationRecorder: Sendable {
  struct Post: Sendable, Equatable {
    var keys: [String]
    /// Whether the post ran on the main queue (on Linux under `swift test` the main
    /// queue is served by a thread that is not the process's first thread).
    var onMainQueue: Bool
  }

  private static let mainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
  }()

  private let posts = Locked<[Post]>([])
  private let token: Locked<(any NSObjectProtocol)?> = Locked(nil)

  init(_ coordinator: SyncCoordinator) {
    let posts = self.posts
    let mainQueueKey = Self.mainQueueKey
    token.withLock {
      $0 = NotificationCenter.default.addObserver(
        forName: Zephyr.keysDidChangeOnCloudNotification, object: coordinator, queue: nil
      ) { note in
        let keys = note.userInfo?[Zephyr.changedKeysUserInfoKey] as? [String] ?? []
        posts.withLock {
          $0.append(Post(keys: keys, onMainQueue: DispatchQueue.getSpecific(key: mainQueueKey) == true))
        }
      }
    }
  }

  deinit {
    token.withLock { token in if let token { NotificationCenter.default.removeObserver(token) } }
  }

  /// Every post so far, after letting the main queue run what was queued before now.
  func received() async -> [Post] {
    await withCheckedContinuation { continuation in
      DispatchQueue.main.async { continuation.resume() }
    }
    return posts.withLock { $0 }
  }
}

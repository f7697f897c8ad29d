import Foundation
import Zephyr
import ZephyrTesting

/// This engine, unchanged, as the tests run it in the Apple-faithful world: a
/// `SyncCoordinator` over the device's store, with an `AppleFaithfulDefaults` suite that
/// announces each write synchronously (so local edits are pushed as on Apple platforms)
/// and a ledger folder of its own. Only the device id, the ledger folder and the clock
/// (the device's skewed wall clock, used for tombstone dates) are configured. Source: this
/// package's `Sources/Zephyr` at the commit the bench is built from.
final class EngineReplica: PeerReplica {
  private let device: String
  private let store: MeteredStore
  private let clock: PeerClock
  private let suiteName: String
  private let defaults: UserDefaults
  private let ledgerDirectory: URL
  private var coordinator: SyncCoordinator?
  /// The coordinator's decision log (`pull theme g7 … (cloud history beats never-synced
  /// device)`), kept when explaining.
  private let log: Locked<[String]>?

  init(device: String, store: MeteredStore, clock: PeerClock, verbose: Bool = false) {
    log = verbose ? Locked([]) : nil
    self.device = device
    self.store = store
    self.clock = clock
    // One suite name per device, reused by every scenario: Foundation keeps every suite a
    // process opens, and walks them all on each write.
    suiteName = "zephyr-bench.peers.\(device)"
    guard let defaults = AppleFaithfulDefaults(suiteName: suiteName) else {
      fatalError("cannot open suite \(suiteName)")
    }
    defaults.removePersistentDomain(forName: suiteName)
    self.defaults = defaults
    ledgerDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("zephyr-bench-peers-\(device)")
    try? FileManager.default.removeItem(at: ledgerDirectory)
    launch()
  }

  /// As an app does at launch: a coordinator, the keys monitored, one `sync()`.
  private func launch() {
    let clock = self.clock
    let log = self.log
    let coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: store,
      configuration: SyncConfiguration(
        deviceID: device, debugEnabled: log != nil,
        logHandler: { message in log?.withLock { $0.append(message.text) } }, ledgerDirectory: ledgerDirectory,
        clock: { clock.now }))
    coordinator.addKeysToBeMonitored(keys: PeerScenario.keys)
    self.coordinator = coordinator
    coordinator.sync()
  }

  func edit(_ key: String, _ value: PropertyListValue?) {
    if let value {
      defaults.set(value.foundationValue, forKey: key)
    } else {
      defaults.removeObject(forKey: key)
    }
    coordinator?.waitForPendingLocalEdits()
  }

  func sync() {
    coordinator?.sync()
  }

  /// The coordinator observes its store itself; events are applied before the delivery
  /// returns.
  func deliverPendingEvents() {
    coordinator?.waitForPendingLocalEdits()
  }

  func localValues() -> [String: PropertyListValue] {
    var values: [String: PropertyListValue] = [:]
    for key in PeerScenario.keys {
      if let raw = defaults.object(forKey: key), let value = PropertyListValue(bridging: raw) { values[key] = value }
    }
    return values
  }

  func drainLog() -> [String] {
    log?.withLock { lines in
      defer { lines = [] }
      return lines
    } ?? []
  }

  func relaunch() {
    tearDownCoordinator()
    launch()
  }

  func tearDown() {
    tearDownCoordinator()
    defaults.removePersistentDomain(forName: suiteName)
    try? FileManager.default.removeItem(at: ledgerDirectory)
  }

  private func tearDownCoordinator() {
    coordinator?.waitForPendingLocalEdits()
    coordinator = nil
  }
}

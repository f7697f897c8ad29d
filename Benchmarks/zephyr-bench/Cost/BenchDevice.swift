import Foundation
import Zephyr
import ZephyrTesting

/// One device: a fresh suite, a ledger folder, a coordinator over a simulated cloud.
final class BenchDevice {
  let suiteName: String
  let defaults: ReadCountingDefaults
  let store: SimulatedDevice
  let coordinator: SyncCoordinator
  private let ledgerDirectory: URL

  /// - Parameter installed: An existing install, whose store had its initial download
  ///   before the app launched; `false` (the default) models a new install.
  init(name: String, cloud: SimulatedCloud, tag: String, installed: Bool = false) {
    suiteName = "zephyr-bench.\(tag).\(name)"
    guard let defaults = ReadCountingDefaults(suiteName: suiteName) else {
      fatalError("cannot open suite \(suiteName)")
    }
    defaults.removePersistentDomain(forName: suiteName)
    self.defaults = defaults
    store = cloud.device(name, initiallyDownloaded: installed)
    ledgerDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("zephyr-bench-\(tag)-\(name)")
    try? FileManager.default.removeItem(at: ledgerDirectory)
    coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: store,
      configuration: SyncConfiguration(
        deviceID: name, limits: cloud.limits, logHandler: { _ in }, ledgerDirectory: ledgerDirectory))
  }

  func tearDown() {
    defaults.removePersistentDomain(forName: suiteName)
    try? FileManager.default.removeItem(at: ledgerDirectory)
  }
}

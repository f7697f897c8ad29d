import Foundation
import ZephyrTesting

@testable import Zephyr

/// A clock the test moves by hand.
final class ManualClock: Sendable {
  private let time = Locked(Date(timeIntervalSince1970: 1_800_000_000))

  var now: Date { time.withLock { $0 } }

  func advance(by seconds: TimeInterval) {
    time.withLock { $0 = $0.addingTimeInterval(seconds) }
  }

  /// The clock as a configuration takes it.
  var reading: @Sendable () -> Date { { [time] in time.withLock { $0 } } }
}

extension Harness {
  /// A device whose ledger folder is its own and, like an app's container, out of reach
  /// while its suite's protected data is unavailable (see
  /// `AppleFaithfulDefaults.protectedDirectories`).
  func lockableDevice(
    _ name: String, monitored: [String], initiallyDownloaded: Bool = true,
    configure: @escaping (inout SyncConfiguration) -> Void = { _ in }
  ) -> TestDevice {
    let folder = ledgerDirectory.appendingPathComponent("device-\(name)", isDirectory: true)
    let device = self.device(name, monitored: monitored, initiallyDownloaded: initiallyDownloaded) {
      $0.ledgerDirectory = folder
      configure(&$0)
    }
    device.faithful.protectedDirectories = [folder]
    return device
  }
}

extension TestDevice {
  /// The suite, as the Apple-faithful emulation.
  var faithful: AppleFaithfulDefaults {
    guard let faithful = defaults as? AppleFaithfulDefaults else {
      preconditionFailure("device \(name) is not in the Apple world")
    }
    return faithful
  }

  /// The ledger folder this device's coordinator uses.
  var ledgerFolder: URL {
    coordinator.configuration.ledgerDirectory ?? ledgerDirectory
  }

  /// The bytes of every file in the ledger folder, by name.
  var ledgerFiles: [String: Data] {
    let folder = ledgerFolder
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    var files: [String: Data] = [:]
    for name in names {
      files[name] = try? Data(contentsOf: folder.appendingPathComponent(name))
    }
    return files
  }

  /// Whether something was written to the ledger folder while it was out of reach.
  var wroteLedgerWhileLocked: Bool {
    let evidence = ledgerFolder.deletingLastPathComponent().appendingPathComponent(
      ledgerFolder.lastPathComponent + ".written-while-unavailable")
    return FileManager.default.fileExists(atPath: evidence.path)
  }
}

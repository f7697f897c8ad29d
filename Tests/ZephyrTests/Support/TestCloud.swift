import Foundation
import ZephyrTesting

@testable import Zephyr

/// Which simulated store a ``Harness`` runs over.
enum Backend: Sendable, CaseIterable, CustomStringConvertible {
  /// `SimulatedCloud`: the iCloud key-value store (the default).
  case keyValue
  /// `SimulatedCloudKit`: CloudKit's private database behind `CKSyncEngine`.
  case cloudKit

  var description: String { self == .keyValue ? "key-value" : "cloudkit" }
}

/// The driving calls both simulated stores share, so a test switches world by switching
/// type.
protocol TestCloud: AnyObject, Sendable {
  func testStore(_ name: String, initiallyDownloaded: Bool) -> any TestStore
  func upload()
  func upload(from device: String)
  func download(to device: String, notify: Bool)
  func download()
  func deliver()
  func post(_ change: ExternalChange, to device: String)
  func switchAccount(of device: String, to account: String)
  var serverValues: [String: PropertyListValue] { get }
  func setServerValue(_ value: PropertyListValue, forKey key: String)
  func removeServerValue(forKey key: String)
  var deviceNames: [String] { get }
  func pendingKeys(of device: String) -> [String]
  func waitForDeliveries()
}

extension TestCloud {
  func download(to device: String) { download(to: device, notify: true) }
}

/// A simulated device's store, as tests read it.
protocol TestStore: KeyValueSyncStore {
  /// The values the device holds (its cache, its records).
  var cachedValues: [String: PropertyListValue] { get }
  /// Accepted `setValue` and `removeValue` calls.
  var writeCount: Int { get }
  /// `synchronize()` calls.
  var synchronizeCount: Int { get }
}

extension SimulatedCloud: TestCloud {
  func testStore(_ name: String, initiallyDownloaded: Bool) -> any TestStore {
    device(name, initiallyDownloaded: initiallyDownloaded)
  }
}

extension SimulatedCloudKit: TestCloud {
  func testStore(_ name: String, initiallyDownloaded: Bool) -> any TestStore {
    device(name, initiallyDownloaded: initiallyDownloaded)
  }
}

extension SimulatedDevice: TestStore {
  var writeCount: Int { statistics.writes }
  var synchronizeCount: Int { statistics.synchronizeCalls }
}

extension SimulatedCloudKitDevice: TestStore {
  var writeCount: Int { statistics.writes }
  var synchronizeCount: Int { statistics.synchronizeCalls }
}

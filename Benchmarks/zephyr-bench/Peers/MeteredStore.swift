import Foundation
import Zephyr
import ZephyrTesting

/// A `KeyValueSyncStore` in front of a `SimulatedDevice` that also counts the bytes
/// written: each accepted-or-not `setValue` costs its key's UTF-8 bytes plus the value's
/// binary-plist size (how iCloud accounts a value), a `removeValue` its key's bytes.
/// Writes and `synchronize()` calls are counted by the device's own statistics.
final class MeteredStore: KeyValueSyncStore {
  let device: SimulatedDevice
  private let written = Locked(0)

  init(_ device: SimulatedDevice) {
    self.device = device
  }

  var bytesWritten: Int { written.withLock { $0 } }

  func value(forKey key: String) -> PropertyListValue? { device.value(forKey: key) }
  func allValues() -> [String: PropertyListValue] { device.allValues() }

  func setValue(_ value: PropertyListValue, forKey key: String) {
    let size = key.utf8.count + SimulatedCloud.binaryPlistSize(of: value)
    written.withLock { $0 += size }
    device.setValue(value, forKey: key)
  }

  func removeValue(forKey key: String) {
    let size = key.utf8.count
    written.withLock { $0 += size }
    device.removeValue(forKey: key)
  }

  @discardableResult func synchronize() -> Bool { device.synchronize() }

  func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
    device.observeExternalChanges(handler)
  }
}

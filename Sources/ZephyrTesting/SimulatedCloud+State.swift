import Foundation
import Zephyr

// The cloud's state behind its lock, and the thread that delivers its events.

struct PendingWrite {
  var sequence: UInt64
  var key: String
  var value: PropertyListValue?
}

struct DeviceState {
  var account: String
  var cache: [String: PropertyListValue] = [:]
  var sizes: [String: Int] = [:]
  var totalBytes = 0
  var pending: [PendingWrite] = []
  /// By registration number: observers are called in the order they registered, in
  /// every process (an app and its extension observing one store, say), never in hash
  /// order.
  var observers: [Int: @Sendable (ExternalChange) -> Void] = [:]
  var nextObserver = 0
  var statistics = SimulatedDevice.Statistics()
  var duringNextWrite: [@Sendable () -> Void] = []
  /// Whether the device's initial download is still to come: its writes are not kept.
  var awaitingInitialDownload = false
  /// Whether the device has no iCloud account now (see ``SimulatedCloud/signOut(_:)``).
  var signedOut = false

  init(account: String) {
    self.account = account
  }

  /// The observers, in the order they registered.
  var orderedObservers: [@Sendable (ExternalChange) -> Void] {
    observers.keys.sorted().compactMap { observers[$0] }
  }

  /// Replaces the cache with `values`, dropping the writes not uploaded yet; returns the
  /// keys whose cached value changed, sorted.
  @discardableResult
  mutating func replaceCache(with values: [String: PropertyListValue]) -> [String] {
    let before = cache
    pending = []
    cache = [:]
    sizes = [:]
    totalBytes = 0
    for (key, value) in values {
      store(value, forKey: key, size: key.utf8.count + SimulatedCloud.binaryPlistSize(of: value))
    }
    return Set(before.keys).union(values.keys).filter { before[$0] != values[$0] }.sorted()
  }

  mutating func store(_ value: PropertyListValue?, forKey key: String, size: Int) {
    totalBytes -= sizes[key] ?? 0
    cache[key] = value
    sizes[key] = value == nil ? nil : size
    totalBytes += value == nil ? 0 : size
  }
}

struct CloudState {
  var servers: [String: [String: PropertyListValue]] = [SimulatedCloud.defaultAccount: [:]]
  var devices: [String: DeviceState] = [:]
  var nextSequence: UInt64 = 0

  /// Runs `body` on a device's state in place. Taken out of the dictionary while it runs,
  /// so that changing it copies none of its (large) caches.
  mutating func withDevice<Result>(_ name: String, _ body: (inout DeviceState) -> Result) -> Result? {
    guard var device = devices.removeValue(forKey: name) else { return nil }
    defer { devices[name] = device }
    return body(&device)
  }

  mutating func upload(from name: String?) {
    var writes: [(account: String, write: PendingWrite)] = []
    for (deviceName, device) in devices where (name == nil || deviceName == name) && !device.signedOut {
      writes += device.pending.map { (device.account, $0) }
      devices[deviceName]?.pending = []
    }
    for (account, write) in writes.sorted(by: { $0.write.sequence < $1.write.sequence }) {
      servers[account, default: [:]][write.key] = write.value
    }
  }

  /// Returns the keys whose cached value changed, sorted.
  mutating func download(to name: String) -> [String] {
    guard var device = devices.removeValue(forKey: name) else { return [] }
    guard !device.signedOut else {
      devices[name] = device
      return []
    }
    let server = servers[device.account] ?? [:]
    if device.awaitingInitialDownload {
      // The initial download: every write made before it is discarded.
      let changed = device.replaceCache(with: server)
      device.awaitingInitialDownload = false
      devices[name] = device
      return changed
    }
    let unsent = Set(device.pending.map(\.key))
    var changed: [String] = []
    for key in Set(server.keys).union(device.cache.keys) where !unsent.contains(key) && server[key] != device.cache[key]
    {
      let value = server[key]
      device.store(value, forKey: key, size: value.map { key.utf8.count + SimulatedCloud.binaryPlistSize(of: $0) } ?? 0)
      changed.append(key)
    }
    devices[name] = device
    return changed.sorted()
  }

  mutating func switchAccount(of name: String, to account: String, limits: StoreLimits) -> [String] {
    guard var device = devices.removeValue(forKey: name) else { return [] }
    device.account = account
    let changed = device.replaceCache(with: servers[account, default: [:]])
    // The new account's values are downloaded with the switch: writes made after it are
    // kept, even on a new install whose own initial download never came.
    device.awaitingInitialDownload = false
    devices[name] = device
    return changed
  }
}

/// Calls observers on the thread ``SimulatedCloud/Delivery`` says.
final class Deliverer: Sendable {
  let mode: SimulatedCloud.Delivery
  private let queue = DispatchQueue(label: "ZephyrTesting.SimulatedCloud.delivery")
  private static let onQueue = DispatchSpecificKey<Bool>()

  init(mode: SimulatedCloud.Delivery) {
    self.mode = mode
    queue.setSpecific(key: Self.onQueue, value: true)
  }

  private var isOnQueue: Bool { DispatchQueue.getSpecific(key: Self.onQueue) == true }

  /// Delivers `change` to `observers` and returns once they all returned.
  func deliver(_ change: ExternalChange, to observers: [@Sendable (ExternalChange) -> Void]) {
    guard !observers.isEmpty else { return }
    LockAudit.assertNoLockHeld(calling: "a store observer")
    let call: @Sendable () -> Void = { for observer in observers { observer(change) } }
    guard mode == .storeThread, !isOnQueue else { return call() }
    let done = DispatchSemaphore(value: 0)
    queue.async {
      call()
      done.signal()
    }
    done.wait()
  }

  /// Runs `action` on the delivery thread without waiting for it, or at once on this
  /// thread with ``SimulatedCloud/Delivery/callingThread``.
  func deliverLater(_ action: @escaping @Sendable () -> Void) {
    guard mode == .storeThread else { return action() }
    queue.async(execute: action)
  }

  /// Runs `action` on the delivery thread and returns once it returned (at once on this
  /// thread with ``SimulatedCloud/Delivery/callingThread``, or when already on it).
  func perform(_ action: () -> Void) {
    guard mode == .storeThread, !isOnQueue else { return action() }
    queue.sync(execute: action)
  }

  /// Waits until everything queued has run.
  func waitUntilIdle() {
    guard mode == .storeThread, !isOnQueue else { return }
    queue.sync {}
  }
}

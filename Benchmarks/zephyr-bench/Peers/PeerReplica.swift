import Foundation
import Zephyr
import ZephyrTesting

/// One device running one design: what the workload asks of it.
protocol PeerReplica: AnyObject {
  /// The app writes `value` (`nil`: removes the key), and the design reacts as its local
  /// observation makes it react.
  func edit(_ key: String, _ value: PropertyListValue?)
  /// The app calls the design's sync entry point.
  func sync()
  /// Hands the design the store events that arrived since the last call.
  func deliverPendingEvents()
  /// The device's values of the scenario's keys.
  func localValues() -> [String: PropertyListValue]
  /// The app is relaunched: a new instance over the same local state and store.
  func relaunch()
  /// Releases what the replica holds (observers, files).
  func tearDown()
  /// The design's own decision log since the last call, for `peers explain`.
  func drainLog() -> [String]
}

extension PeerReplica {
  func drainLog() -> [String] { [] }
}

/// The designs compared, in report order.
enum PeerDesign: String, CaseIterable, Sendable {
  case zephyr4 = "zephyr-3.8/4"
  case zephyr5 = "zephyr-5.0.1"
  case defaults9 = "defaults-9"
  case this

  /// `verbose`: this engine logs its decisions, for `peers explain`.
  func replica(device: String, store: MeteredStore, clock: PeerClock, verbose: Bool = false) -> PeerReplica {
    switch self {
    case .zephyr4: ModelHost(store: store) { Zephyr4Model(store: store, local: $0, clock: clock) }
    case .zephyr5: ModelHost(store: store) { Zephyr5Model(store: store, local: $0) }
    case .defaults9: ModelHost(store: store) { Defaults9Model(store: store, local: $0, clock: clock) }
    case .this: EngineReplica(device: device, store: store, clock: clock, verbose: verbose)
    }
  }
}

/// A device's wall clock: true time plus its skew, set by the driver at each step.
final class PeerClock: Sendable {
  private let time = Locked(PeerScenario.start)

  var now: Date { time.withLock { $0 } }

  func set(_ date: Date) {
    time.withLock { $0 = date }
  }
}

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

/// A peer model's local `UserDefaults`: a plain dictionary that outlives model instances,
/// as a suite outlives an app launch. Models keep their own bookkeeping in it too, as the
/// libraries do in `UserDefaults`.
final class LocalDefaults {
  var values: [String: PropertyListValue] = [:]
}

/// What a peer model implements: the design's reactions, on its own local state.
protocol PeerModel: AnyObject {
  /// The observer of local edits (KVO or `didChangeNotification`) fired for `key`.
  func localDidChange(_ key: String)
  func sync()
  /// `NSUbiquitousKeyValueStore.didChangeExternallyNotification`.
  func storeDidChange(_ change: ExternalChange)
  /// What the app does at launch after creating the instance.
  func launch()
}

/// Runs a ``PeerModel`` as a device: holds its local state across relaunches and hands
/// it the store's events in the driver's thread, in arrival order.
final class ModelHost: PeerReplica {
  private let local = LocalDefaults()
  private let inbox = Locked<[ExternalChange]>([])
  private let make: (LocalDefaults) -> PeerModel
  private var model: PeerModel
  private var token: ObservationToken?

  init(store: MeteredStore, make: @escaping (LocalDefaults) -> PeerModel) {
    self.make = make
    model = make(local)
    let inbox = self.inbox
    token = store.observeExternalChanges { change in inbox.withLock { $0.append(change) } }
    model.launch()
  }

  /// The observers the libraries use (KVO, `didChangeNotification` diffed against a
  /// snapshot) report a change of value; removing a key the device does not hold is none.
  func edit(_ key: String, _ value: PropertyListValue?) {
    guard local.values[key] != value else { return }
    local.values[key] = value
    model.localDidChange(key)
  }

  func sync() { model.sync() }

  func deliverPendingEvents() {
    let events = inbox.withLock { events -> [ExternalChange] in
      defer { events = [] }
      return events
    }
    for event in events { model.storeDidChange(event) }
  }

  func localValues() -> [String: PropertyListValue] {
    local.values.filter { PeerScenario.keys.contains($0.key) }
  }

  func relaunch() {
    model = make(local)
    model.launch()
  }

  func tearDown() {
    token?.cancel()
    token = nil
  }
}

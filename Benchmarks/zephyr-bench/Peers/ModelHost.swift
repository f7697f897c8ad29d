import Foundation
import Zephyr
import ZephyrTesting

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

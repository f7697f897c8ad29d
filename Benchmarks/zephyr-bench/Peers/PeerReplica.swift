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

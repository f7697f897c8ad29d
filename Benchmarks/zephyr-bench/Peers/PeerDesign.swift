import Foundation
import Zephyr
import ZephyrTesting

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

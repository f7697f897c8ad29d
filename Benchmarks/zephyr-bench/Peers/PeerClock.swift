import Foundation
import Zephyr
import ZephyrTesting

/// A device's wall clock: true time plus its skew, set by the driver at each step.
final class PeerClock: Sendable {
  private let time = Locked(PeerScenario.start)

  var now: Date { time.withLock { $0 } }

  func set(_ date: Date) {
    time.withLock { $0 = date }
  }
}

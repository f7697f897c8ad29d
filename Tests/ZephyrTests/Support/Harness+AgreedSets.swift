import Foundation
import Zephyr

extension Harness {
  /// Devices A and B monitoring the `.set` packed keys of `sets` (B's first use of each
  /// settled), each key holding its ids on both: inserted on A, delivered to B.
  func devicesAgreeing(
    on sets: KeyValuePairs<String, [UInt32]>, configureB: @escaping (inout SyncConfiguration) -> Void = { _ in }
  ) -> (TestDevice, TestDevice) {
    let names = sets.map(\.key)
    let a = device("A", monitored: names)
    let b = device("B", monitored: names, configure: configureB)
    for (name, ids) in sets {
      let key = SyncKey<PackedSet<UInt32>>(name, default: [], merge: .set)
      _ = b.coordinator[key]
      b.settle()  // the first use's reconcile
      a.coordinator.insert(contentsOf: ids, into: key)
    }
    a.settle()
    cloud.deliver()
    b.settle()
    return (a, b)
  }

  /// ``devicesAgreeing(on:configureB:)`` with one key, `read`.
  func devicesAgreeing(
    on ids: [UInt32], configureB: @escaping (inout SyncConfiguration) -> Void = { _ in }
  ) -> (TestDevice, TestDevice) {
    devicesAgreeing(on: ["read": ids], configureB: configureB)
  }
}

extension Locked where Value == Int {
  /// Counts one call; whether it is the first (for a hook that acts once).
  func isFirstCall() -> Bool {
    withLock { count in
      count += 1
      return count == 1
    }
  }
}

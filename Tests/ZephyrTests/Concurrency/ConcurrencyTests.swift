import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Many threads at once: no crash, no data race (this suite also runs under
/// `--sanitize=thread` in CI), and the devices still converge.
struct ConcurrencyTests {
  @Test func eightThreadsSyncingDuringDeliveriesConverge() {
    let harness = Harness()
    let keys = (0..<6).map { "key\($0)" }
    let devices = ["A", "B", "C"].map { harness.device($0, monitored: keys) }
    let coordinators = devices.map(\.coordinator)
    let suites = devices.map(\.suiteName)
    let cloud = harness.cloud

    DispatchQueue.concurrentPerform(iterations: 8) { thread in
      for step in 0..<40 {
        let device = (thread + step) % coordinators.count
        let key = keys[(thread * 7 + step) % keys.count]
        switch (thread + step) % 5 {
        case 0: UserDefaults(suiteName: suites[device])?.set("t\(thread)s\(step)", forKey: key)
        case 1: coordinators[device].sync()
        case 2: coordinators[device].sync(keys: [key])
        case 3: thread == 0 ? cloud.deliver() : cloud.download(to: ["A", "B", "C"][device])
        default: UserDefaults(suiteName: suites[device])?.removeObject(forKey: key)
        }
      }
    }

    for _ in 0..<3 { harness.round() }
    for key in keys {
      let values = Set(harness.values(of: key).values)
      #expect(values.count == 1, "\(key) differs: \(values)")
    }
    let writes = devices.map(\.store.statistics.writes)
    harness.round()
    #expect(devices.map(\.store.statistics.writes) == writes, "a further round writes nothing")
  }

  @Test func concurrentReadersSeeConsistentStatus() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let coordinator = a.coordinator
    let suite = a.suiteName
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
      for step in 0..<50 {
        if thread.isMultiple(of: 2) {
          UserDefaults(suiteName: suite)?.set("v\(step)", forKey: "theme")
          coordinator.sync()
        } else {
          _ = coordinator.status.description
          _ = coordinator.monitoredKeys
          coordinator.addKeysToBeMonitored(keys: ["k\(thread)"])
        }
      }
    }
    #expect(coordinator.monitoredKeys.count == 5)
  }
}

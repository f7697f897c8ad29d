import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Typed sets from many threads at once, while other operations run: every key ends up
/// pushed with its last value.
struct TypedConcurrencyTests {
  @Test func typedSetsFromManyThreadsAreAllPushedWithTheirLastValue() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["shared"])
    let coordinator = a.coordinator
    // UserDefaults is thread-safe; swift-corelibs-foundation does not say so.
    nonisolated(unsafe) let defaults = a.defaults
    let keys = (0..<6).map { SyncKey<Int>("counter.\($0)", default: -1) }
    DispatchQueue.concurrentPerform(iterations: keys.count + 2) { lane in
      guard lane < keys.count else {
        // Other operations meanwhile: full syncs and an edit noticed by notification.
        for round in 0..<5 {
          coordinator.sync()
          defaults.set(round, forKey: "shared")
        }
        return
      }
      for value in 0..<40 { coordinator[keys[lane]] = value }
    }
    a.settle()
    coordinator.sync()

    for key in keys {
      #expect(coordinator[key] == 39)
      #expect(a.record(key.name)?.content == .value(.integer(39)), "\(key.name) was pushed with its last value")
    }
  }
}

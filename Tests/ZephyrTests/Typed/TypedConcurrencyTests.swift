import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Typed sets from many threads at once, while other operations run: every key ends up
/// pushed with its last value, by the typed push itself (nothing syncs afterwards).
struct TypedConcurrencyTests {
  @Test func typedSetsFromManyThreadsAreAllPushedWithTheirLastValue() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["shared"])
    let coordinator = a.coordinator
    // UserDefaults is thread-safe; swift-corelibs-foundation does not say so.
    nonisolated(unsafe) let defaults = a.defaults
    let keys = (0..<6).map { SyncKey<Int>("counter.\($0)", default: -1) }

    // Sets from every lane while full syncs and an edit noticed by notification run.
    DispatchQueue.concurrentPerform(iterations: keys.count + 2) { lane in
      guard lane < keys.count else {
        for round in 0..<5 {
          coordinator.sync()
          defaults.set(round, forKey: "shared")
        }
        return
      }
      for value in 0..<40 { coordinator[keys[lane]] = value }
    }
    a.settle()
    for key in keys {
      #expect(coordinator[key] == 39)
      #expect(a.record(key.name)?.content == .value(.integer(39)), "\(key.name) was pushed with its last value")
    }

    // Then one more set of each key, from many threads, with nothing else running: only
    // the typed push can carry these values to the store.
    let before = a.store.statistics
    DispatchQueue.concurrentPerform(iterations: keys.count) { lane in
      coordinator[keys[lane]] = 40
    }
    a.settle()
    for key in keys {
      #expect(a.record(key.name)?.content == .value(.integer(40)), "\(key.name) was pushed by its typed set")
    }
    let after = a.store.statistics
    #expect(after.writes - before.writes == keys.count, "one store write per key")
    #expect(after.synchronizeCalls - before.synchronizeCalls <= keys.count)

    let settled = a.store.statistics
    coordinator.sync()
    #expect(a.store.statistics.writes == settled.writes, "a sync afterwards finds nothing left to push")
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Typed calls made from inside Zephyr's callbacks, which may call any method because no
/// lock is held across a call out (Threading.md): an observer of the
/// suite's `didChangeNotification` on the writing thread or on an `OperationQueue`, the
/// log handler, a `.custom` merge strategy. None deadlocks, and every set is pushed.
// Serialized: its tests block on deliveries and pushes. Side by side with the randomized
// scenarios on a two-core machine, some waited minutes for a thread (no time limit here:
// it failed them for that wait).
@Suite(.serialized)
struct TypedReentrancyTests {
  /// A holds `theme = "base"`, synced to B; B follows theme.
  private func twoDevices(
    configureB: @escaping (inout SyncConfiguration) -> Void = { _ in }
  ) -> (harness: Harness, a: TestDevice, b: TestDevice) {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"], configure: configureB)
    a.coordinator[Keys.theme] = "base"
    a.settle()
    harness.cloud.deliver()
    return (harness, a, b)
  }

  /// B's pull of theme writes its suite; observers of that write call typed keys.
  private func pullThemeOnB(_ harness: Harness, _ a: TestDevice, _ b: TestDevice) {
    a.coordinator[Keys.theme] = "dusk"
    a.settle()
    harness.cloud.deliver()
  }

  @Test
  func typedCallsFromADidChangeObserverOnTheWritingThread() {
    let (harness, a, b) = twoDevices()
    let coordinator = b.coordinator
    let reads = Locked<[String]>([])
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: nil
    ) { _ in
      guard reads.withLock({ $0.isEmpty }) else { return }
      let theme = coordinator[Keys.theme]  // the first one: inside the pull's write
      reads.withLock { $0.append(theme) }
      coordinator[Keys.count] = 55
      _ = coordinator.changes(of: Keys.flag)
    }
    defer { NotificationCenter.default.removeObserver(token) }

    pullThemeOnB(harness, a, b)
    b.settle()

    #expect(reads.withLock { $0 }.count == 1)
    #expect(b.coordinator[Keys.theme] == "dusk")
    #expect(b.record("count")?.content == .value(.integer(55)))
  }

  @Test
  func typedCallsFromADidChangeObserverOnAnOperationQueue() {
    let (harness, a, b) = twoDevices()
    let coordinator = b.coordinator
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    // On a queue of its own, not the global pool: the poster waits for the observer, and
    // a pooled thread may not come (see Watchdog).
    let observerQueue = DispatchQueue(label: "app observer")  // held: the property is unowned
    queue.underlyingQueue = observerQueue
    let calls = Locked(0)
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: queue
    ) { _ in
      // The poster waits for this block, which calls back into the coordinator.
      guard
        calls.withLock({
          $0 += 1
          return $0
        }) == 1
      else { return }
      coordinator[Keys.size] = 99
      _ = coordinator[Keys.size]
    }
    defer {
      NotificationCenter.default.removeObserver(token)
      withExtendedLifetime(observerQueue) {}
    }

    pullThemeOnB(harness, a, b)
    queue.waitUntilAllOperationsAreFinished()
    b.settle()

    #expect(calls.withLock { $0 } >= 1)
    #expect(b.coordinator[Keys.theme] == "dusk")
    #expect(b.record("size")?.content == .value(.double(99)))
  }

  @Test
  func typedCallsFromTheLogHandler() {
    let box = Locked<SyncCoordinator?>(nil)
    let calls = Locked(0)
    let (harness, a, b) = twoDevices { configuration in
      configuration.logHandler = { _ in
        guard let coordinator = box.withLock({ $0 }),
          calls.withLock({
            $0 += 1
            return $0
          }) == 1
        else { return }
        coordinator[Keys.count] = 11
        _ = coordinator[Keys.count]
        _ = coordinator.changes(of: Keys.count)
      }
    }
    box.withLock { $0 = b.coordinator }
    defer { box.withLock { $0 = nil } }

    pullThemeOnB(harness, a, b)  // B logs its pull
    b.settle()

    #expect(calls.withLock { $0 } >= 1)
    #expect(b.coordinator[Keys.theme] == "dusk")
    #expect(b.record("count")?.content == .value(.integer(11)))
  }

  @Test
  func typedCallsFromACustomMergeStrategy() {
    let box = Locked<SyncCoordinator?>(nil)
    let resolved = Locked(0)
    let (harness, a, b) = twoDevices { configuration in
      configuration.mergeStrategies["tags"] = .custom { _ in
        if let coordinator = box.withLock({ $0 }) {
          _ = coordinator[Keys.theme]
          coordinator[Keys.theme] = "from the resolver"
        }
        resolved.withLock { $0 += 1 }
        return .merged(.array([.string("merged")]))
      }
    }
    box.withLock { $0 = b.coordinator }
    defer { box.withLock { $0 = nil } }
    // Both devices have a history of tags, then change it before hearing from each other.
    a.coordinator[Keys.tags] = ["base"]
    a.settle()
    harness.cloud.deliver()
    _ = b.coordinator[Keys.tags]
    b.settle()
    b.coordinator.engine.localEditQueue.suspend()  // B's edit is not pushed yet when A's arrives
    b.coordinator[Keys.tags] = ["b"]
    a.coordinator[Keys.tags] = ["a"]
    a.settle()
    harness.cloud.deliver()  // a conflict on B: the resolver runs, and sets theme
    b.coordinator.engine.localEditQueue.resume()
    b.settle()
    harness.cloud.deliver()

    #expect(resolved.withLock { $0 } >= 1, "the conflict reached the resolver")
    #expect(b.coordinator[Keys.tags] == ["merged"])
    #expect(b.record("theme")?.content == .value(.string("from the resolver")), "the resolver's set was pushed")
    #expect(a.coordinator[Keys.theme] == "from the resolver")
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Element edits made from a `didChangeNotification` observer of one of a batch's own
/// `UserDefaults` writes: on the batch's thread, or handed to another thread.
struct ElementEditObserverTests {
  static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)
  static let starred = SyncKey<PackedSet<UInt32>>("starred", default: [], merge: .set)

  /// Two devices agreeing on read = [1, 2] and starred = [7, 8]; then A inserts 10 into
  /// read and 70 into starred, uploaded but not delivered.
  static func staged() -> (Harness, TestDevice, TestDevice) {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: ["read": [1, 2], "starred": [7, 8]])
    a.coordinator.insert(10, into: Self.read)
    a.coordinator.insert(70, into: Self.starred)
    a.settle()
    return (harness, a, b)
  }

  /// An observer that runs on the writing thread (queue: nil) inserts into `starred`
  /// when the pull batch writes `read`. The batch writes `starred` next, with the value
  /// it planned before the insert: it must leave the key to the insert's push instead of
  /// overwriting the insert (which, read again, would then never be pushed).
  @Test func anInsertFromAnObserverOfTheBatchsEarlierWriteIsNotLost() {
    let (harness, a, b) = Self.staged()
    let coordinator = b.coordinator
    let fired = Locked(false)
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: nil
    ) { [weak coordinator] _ in
      guard let coordinator, coordinator[Self.read].contains(10) else { return }
      guard
        fired.withLock({ done in
          defer { done = true }
          return !done
        })
      else { return }
      coordinator.insert(99, into: Self.starred)
    }
    harness.cloud.deliver()
    harness.cloud.waitForDeliveries()
    NotificationCenter.default.removeObserver(token)
    #expect(fired.withLock { $0 })
    b.settle()
    harness.cloud.deliver()
    a.settle()
    harness.cloud.deliver()
    #expect(b.coordinator[Self.starred] == [7, 8, 70, 99], "the observer's insert was lost on B")
    #expect(a.coordinator[Self.starred] == [7, 8, 70, 99], "the observer's insert never reached A")
  }

  /// An observer that hands its work to another thread and waits for it, as Apple's
  /// `addObserver(forName:object:queue: .main)` makes a background writer wait for the
  /// main queue. The insert runs off the operation's thread while the batch's write of
  /// the key is in flight: it must not wait for that write to return (the batch waits
  /// for this observer), since its read shows the write landed.
  @Test func anInsertFromAQueuedObserverDoesNotStallSevenSeconds() {
    let (harness, _, b) = Self.staged()
    let coordinator = b.coordinator
    let fired = Locked(false)
    let elapsed = Locked(0.0)
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: nil
    ) { [weak coordinator] _ in
      guard let coordinator, Thread.current.name != "observer-queue" else { return }
      guard coordinator[Self.read].contains(10) else { return }
      guard
        fired.withLock({ done in
          defer { done = true }
          return !done
        })
      else { return }
      let done = DispatchSemaphore(value: 0)
      let thread = Thread {
        let start = Date()
        coordinator.insert(99, into: Self.read)
        elapsed.withLock { $0 = Date().timeIntervalSince(start) }
        done.signal()
      }
      thread.name = "observer-queue"
      thread.start()
      done.wait()
    }
    harness.cloud.deliver()
    harness.cloud.waitForDeliveries()
    NotificationCenter.default.removeObserver(token)
    #expect(fired.withLock { $0 })
    let seconds = elapsed.withLock { $0 }
    #expect(seconds < 0.5, "insert from the observer took \(seconds) s")
    #expect(!b.warnings.contains { $0.contains("element edit of read written unchecked") }, "\(b.warnings)")
    b.settle()
    #expect(b.coordinator[Self.read] == [1, 2, 10, 99])
  }
}

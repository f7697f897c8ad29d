import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Element edits and typed sets made by several app threads, and last-writer-wins keys
/// with a typed set waiting for its push.
struct ElementEditConcurrencyTests {
  static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)
  static let theme = SyncKey<String>("theme", default: "light")

  /// Two app threads insert into the same key at once. Thread 2's whole insert runs
  /// between thread 1's read and its write: thread 1 must not write a set without thread
  /// 2's element (it reads and edits again).
  @Test func twoConcurrentInsertsBothLand() {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: [1, 2])
    let coordinator = b.coordinator
    let fired = Locked(false)
    coordinator.engine.testHooks.withLock { hooks in
      hooks.betweenElementReadAndWrite = { [weak coordinator] _ in
        guard let coordinator,
          fired.withLock({ done in
            defer { done = true }
            return !done
          })
        else { return }
        let done = DispatchSemaphore(value: 0)
        Thread {
          coordinator.insert(20, into: Self.read)  // another app thread, start to end
          done.signal()
        }.start()
        done.wait()
      }
    }
    coordinator.insert(10, into: Self.read)
    coordinator.engine.testHooks.withLock { $0.betweenElementReadAndWrite = nil }
    b.settle()
    harness.cloud.deliver()
    a.settle()
    #expect(b.coordinator[Self.read] == [1, 2, 10, 20])
    #expect(a.coordinator[Self.read] == [1, 2, 10, 20])
  }

  /// A last-writer-wins key: a typed set waits for its coalesced push, then another
  /// process on the suite writes the key (it posts nothing here), then another device's
  /// change arrives. The inbound value wins, as documented for `.lastWriterWins`: a typed
  /// set that landed before the pull read the key does not hold the pull back.
  @Test func anInboundChangeOfALastWriterWinsKeyStillWinsOverAnUnpushedSet() throws {
    let harness = Harness()
    let scheduler = CoalescingTests.ManualScheduler()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"]) { configuration in
      configuration.coalescingInterval = 2
      configuration.coalescingScheduler = { scheduler.schedule(after: $0, $1) }
    }
    a.coordinator[Self.theme] = "light"
    a.settle()
    harness.cloud.deliver()
    b.coordinator.sync()
    #expect(b.coordinator[Self.theme] == "light")
    b.settle()  // the first use's reconcile, before the set below waits for its push

    b.coordinator[Self.theme] = "blue"  // waits for its coalesced push
    let other = try #require(AppleFaithfulDefaults(suiteName: b.suiteName))
    other.set("green", forKey: "theme")  // another process on the suite
    a.coordinator[Self.theme] = "dark"
    a.settle()
    harness.cloud.deliver()
    harness.cloud.waitForDeliveries()
    scheduler.fire()
    b.settle()
    harness.cloud.deliver()
    a.settle()
    harness.cloud.waitForDeliveries()
    #expect(!b.debugLines.contains { $0.contains("keep theme: edited locally while its pull was decided") })
    #expect(a.coordinator[Self.theme] == b.coordinator[Self.theme], "A and B disagree: \(b.debugLines)")
    #expect(a.coordinator[Self.theme] == "dark", "\(b.debugLines)")
  }
}

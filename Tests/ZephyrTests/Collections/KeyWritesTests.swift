import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Interleavings of typed writes and element edits with batches (``KeyWrites``): a set
/// made while a resolver runs, a held set landing, a push that takes a write still
/// landing, an observer of a typed write editing the same key.
@Suite struct KeyWritesTests {
  static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)
  static let other = SyncKey<String>("other", default: "")
  static let theme = SyncKey<String>("theme", default: "light")

  /// A last-writer-wins key whose conflict a resolver merges (`.push` with reason
  /// `.resolverMerged`, which also writes UserDefaults). The key is not read again before
  /// the write (it is neither a pull nor a strategy merge), and its `batchBase` is taken
  /// before `decide` (which calls the resolver), so a typed set that lands while the
  /// resolver runs keeps the merged value (computed from the older local value) from
  /// replacing it; the set is pushed.
  @Test func aTypedSetMadeWhileTheResolverRunsIsNotOverwritten() {
    let harness = Harness()
    let scheduler = CoalescingTests.ManualScheduler()
    let box = Locked<SyncCoordinator?>(nil)
    let fired = Locked(0)
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"]) { configuration in
      configuration.coalescingInterval = 2
      configuration.coalescingScheduler = { scheduler.schedule(after: $0, $1) }
      // The first conflict is merged while the app sets the key; the set, met as a
      // conflict in its own push, is kept.
      configuration.conflictResolver = { conflict in
        guard fired.isFirstCall() else { return .keepLocal }
        if let coordinator = box.withLock({ $0 }) {
          let done = DispatchSemaphore(value: 0)
          Thread {
            coordinator[Self.theme] = "set during resolver"  // the app's main thread
            done.signal()
          }.start()
          done.wait()
        }
        return .merged(.string("merged"))
      }
    }
    box.withLock { $0 = b.coordinator }
    defer { box.withLock { $0 = nil } }
    a.coordinator[Self.theme] = "x"
    a.settle()
    harness.cloud.deliver()
    harness.cloud.waitForDeliveries()
    #expect(b.coordinator[Self.theme] == "x")
    b.settle()
    scheduler.fire()
    b.settle()

    b.coordinator[Self.theme] = "b"  // waits for its coalesced push
    a.coordinator[Self.theme] = "a"
    a.settle()
    harness.cloud.deliver()  // B's event: conflict "b" vs "a", the resolver runs
    harness.cloud.waitForDeliveries()
    #expect(fired.withLock { $0 } >= 1)
    scheduler.fire()
    b.settle()
    harness.cloud.deliver()
    harness.cloud.waitForDeliveries()
    a.settle()
    #expect(b.coordinator[Self.theme] == "set during resolver", "\(b.debugLines.suffix(12))")
    #expect(a.coordinator[Self.theme] == "set during resolver")
  }

  /// A typed set held while protected data is unavailable is written once it is
  /// available. An element edit that reads the key before that write lands must not be
  /// written over by it: the held set is written as a typed write, so the edit reads
  /// again once it landed.
  @Test func anInsertRacingTheWriteOfAHeldSetIsNotLost() throws {
    let harness = Harness()
    let b = harness.lockableDevice("B", monitored: ["read"])
    let coordinator = b.coordinator
    _ = coordinator[Self.read]
    b.settle()
    coordinator.insert(contentsOf: [1, 2], into: Self.read)
    b.settle()

    b.faithful.isProtectedDataAvailable = false
    coordinator[Self.read] = [1, 2, 5]  // held until protected data is available
    let first = Locked(0)
    let inserted = DispatchSemaphore(value: 0)
    let readDone = DispatchSemaphore(value: 0)
    coordinator.engine.testHooks.withLock { hooks in
      hooks.betweenElementReadAndWrite = { _ in readDone.signal() }
    }
    b.faithful.writeInterceptor = { write in
      guard write == .set(key: "read"), first.isFirstCall() else { return true }
      // The held set is about to land: the app's other thread reads the key first.
      Thread {
        coordinator.insert(9, into: Self.read)
        inserted.signal()
      }.start()
      readDone.wait()
      return true
    }
    b.faithful.isProtectedDataAvailable = true
    inserted.wait()
    coordinator.engine.testHooks.withLock { $0.betweenElementReadAndWrite = nil }
    b.settle()
    b.faithful.writeInterceptor = nil
    b.settle()
    #expect(first.withLock { $0 } >= 1)
    #expect(coordinator[Self.read] == [1, 2, 5, 9], "\(b.debugLines.suffix(10))")
  }

  /// The push of local edits takes the lane's typed writes while one of them is still
  /// landing (recorded, its UserDefaults write not returned): the batch's base for that
  /// key is nil, so its merge (store record and local value) is skipped with "its push
  /// follows". This batch was that push: the typed write, once it returns, marks the key
  /// to be read again, so its own push merges both.
  @Test func aMergeSkippedByThePushThatTookTheLandingWriteIsPushedLater() throws {
    let harness = Harness()
    let scheduler = CoalescingTests.ManualScheduler()
    let (a, b) = harness.devicesAgreeing(on: [1, 2]) { configuration in
      configuration.coalescingInterval = 2
      configuration.coalescingScheduler = { scheduler.schedule(after: $0, $1) }
    }
    scheduler.fire()
    b.settle()
    a.coordinator.insert(10, into: Self.read)
    a.settle()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)  // B's store holds 10, no event

    let coordinator = b.coordinator
    coordinator[Self.other] = "armed"  // arms the coalesced push
    let defaults = try #require(b.defaults as? AppleFaithfulDefaults)
    let first = Locked(0)
    defaults.writeInterceptor = { write in
      guard write == .set(key: "read"), first.isFirstCall() else { return true }
      // B's insert is recorded, about to land: the coalesced push runs now.
      let done = DispatchSemaphore(value: 0)
      Thread {
        scheduler.fire()
        coordinator.waitForPendingLocalEdits()
        done.signal()
      }.start()
      done.wait()
      return true
    }
    coordinator.insert(20, into: Self.read)
    defaults.writeInterceptor = nil
    for _ in 0..<3 {
      scheduler.fire()
      b.settle()
      harness.cloud.deliver()
      harness.cloud.waitForDeliveries()
      a.settle()
    }
    #expect(first.withLock { $0 } >= 1)
    #expect(b.coordinator[Self.read] == [1, 2, 10, 20], "\(b.debugLines.suffix(12))")
    #expect(a.coordinator[Self.read] == [1, 2, 10, 20])
  }

  /// A `didChangeNotification` observer (queue: nil, so on the writing thread) that
  /// edits the same key's elements when a typed write of it lands: that write returns only
  /// after this observer, so the edit must not wait for it; its read shows it landed.
  @Test func anInsertFromAnObserverOfItsOwnThreadsTypedWriteDoesNotStall() {
    let harness = Harness()
    let (_, b) = harness.devicesAgreeing(on: [1, 2])
    let coordinator = b.coordinator
    let fired = Locked(0)
    let elapsed = Locked(0.0)
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: nil
    ) { [weak coordinator] _ in
      guard let coordinator, fired.isFirstCall() else { return }
      let start = Date()
      coordinator.insert(99, into: Self.read)
      elapsed.withLock { $0 = Date().timeIntervalSince(start) }
    }
    coordinator.insert(5, into: Self.read)
    NotificationCenter.default.removeObserver(token)
    b.settle()
    #expect(fired.withLock { $0 } >= 1)
    let seconds = elapsed.withLock { $0 }
    #expect(seconds < 0.5, "insert from the observer took \(seconds) s")
    #expect(!b.warnings.contains { $0.contains("did not return for a second") }, "\(b.warnings)")
    #expect(coordinator[Self.read] == [1, 2, 5, 99])
  }
}

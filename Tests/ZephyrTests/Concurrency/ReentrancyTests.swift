import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 8: the engine in the world apps ship in. Every test here runs against
/// `AppleFaithfulDefaults`, which posts `didChangeNotification` synchronously from inside
/// each write, and a cloud that delivers on its own thread. Before the engine stopped
/// holding its lock across calls out, each of these hung or crashed.
struct ReentrancyTests {
  /// Two devices with `theme` in agreement at "base".
  private func agreedPair(_ configureB: @escaping (inout SyncConfiguration) -> Void = { _ in }) -> (
    Harness, TestDevice, TestDevice
  ) {
    let harness = Harness()
    // One synchronize() per batch that wrote, as Zephyr 5 did: what these tests count.
    let a = harness.device("A", monitored: ["theme", "other"]) { $0.synchronizeInterval = 0 }
    let b = harness.device("B", monitored: ["theme", "other"], configure: configureB)
    a.set(.string("base"), "theme")
    harness.round()
    return (harness, a, b)
  }

  @Test func aPullThroughThePostingSubclassReturns() {
    let (harness, a, b) = agreedPair()
    #expect(b.defaults is AppleFaithfulDefaults)
    a.set(.string("dusk"), "theme")  // a local edit, announced and pushed
    harness.cloud.upload()
    harness.cloud.download(to: "B")  // an inbound event and a pull, on the cloud's thread
    #expect(b.value("theme") == .string("dusk"))
    b.coordinator.sync()  // a sync that writes nothing
    #expect(b.value("theme") == .string("dusk"))
  }

  @Test func aLocalEditThroughThePostingSubclassIsPushedOnceWithOneSynchronize() {
    let (harness, a, _) = agreedPair()
    defer { withExtendedLifetime(harness) {} }
    let before = a.store.statistics
    a.set(.string("dusk"), "theme")
    let after = a.store.statistics
    #expect(after.writes == before.writes + 1)
    #expect(after.synchronizeCalls == before.synchronizeCalls + 1)
    #expect(a.record("theme")?.content == .value(.string("dusk")))
  }

  /// An app observer on an `OperationQueue`: the posting thread waits for it while it calls
  /// `status` and `sync(keys:)` on the coordinator that is writing.
  @Test func anAppObserverOnAnotherQueueMayCallZephyrDuringAPull() {
    let (harness, a, b) = agreedPair()
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    // On a queue of its own (a thread libdispatch always provides), not the global pool:
    // the poster waits for the observer, and a pooled thread may not come (see Watchdog).
    let observerQueue = DispatchQueue(label: "app observer")  // held: the property is unowned
    queue.underlyingQueue = observerQueue
    let calls = Locked(0)
    let coordinator = b.coordinator
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: queue
    ) { _ in
      _ = coordinator.status
      coordinator.sync(keys: ["theme"])
      calls.withLock { $0 += 1 }
    }
    defer {
      NotificationCenter.default.removeObserver(token)
      withExtendedLifetime(observerQueue) {}
    }
    a.set(.string("dusk"), "theme")
    harness.cloud.upload()
    harness.cloud.download(to: "B")
    queue.waitUntilAllOperationsAreFinished()
    b.settle()
    #expect(calls.withLock { $0 } >= 1)
    #expect(b.value("theme") == .string("dusk"))
  }

  /// An observer of the suite on the writing thread (queue `nil`) that calls `sync()`
  /// from inside Zephyr's own pull: queued, run right after the pull.
  @Test func anObserverOnTheWritingThreadMayCallSyncDuringAPull() {
    let (harness, a, b) = agreedPair()
    let coordinator = b.coordinator
    let calls = Locked(0)
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: nil
    ) { _ in
      calls.withLock { $0 += 1 }
      coordinator.sync()
    }
    defer { NotificationCenter.default.removeObserver(token) }
    a.set(.string("dusk"), "theme")
    harness.cloud.upload()
    harness.cloud.download(to: "B")
    #expect(b.value("theme") == .string("dusk"))
    #expect(calls.withLock { $0 } >= 1)
    #expect(b.debugLines.contains { $0.contains("called from inside an operation: runs right after it") })
  }

  /// An observer that writes another monitored key from inside Zephyr's pull: that edit is
  /// not mistaken for Zephyr's own write, and is pushed.
  @Test func anEditMadeByAnObserverInsideAPullIsPushed() {
    let (harness, a, b) = agreedPair()
    let defaults = UncheckedDefaults(b.defaults)
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: nil
    ) { _ in
      guard defaults.value.string(forKey: "theme") == "dusk", defaults.value.string(forKey: "other") == nil else {
        return
      }
      defaults.value.set("derived", forKey: "other")
    }
    defer { NotificationCenter.default.removeObserver(token) }
    a.set(.string("dusk"), "theme")
    harness.cloud.upload()
    harness.cloud.download(to: "B")
    b.settle()
    #expect(b.record("other")?.content == .value(.string("derived")))
  }

  @Test func aLogHandlerMayCallBackIntoItsCoordinator() {
    let box = Locked<SyncCoordinator?>(nil)
    let seen = Locked<[String]>([])
    let (harness, a, b) = agreedPair { configuration in
      configuration.logHandler = { message in
        seen.withLock { $0.append(message.text) }
        guard let coordinator = box.withLock({ $0 }) else { return }
        _ = coordinator.status
        coordinator.waitForPendingLocalEdits()
        if message.text.hasPrefix("push") { coordinator.sync(keys: ["theme"]) }
      }
    }
    box.withLock { $0 = b.coordinator }
    defer { box.withLock { $0 = nil } }
    b.set(.string("night"), "theme")  // pushed on the local-edit queue, logged there
    b.coordinator.sync()
    harness.cloud.deliver()
    #expect(a.value("theme") == .string("night"))
    #expect(
      seen.withLock { $0 }.contains { $0.contains("waitForPendingLocalEdits() called from inside Zephyr's own work") })
  }

  @Test func aResolverCallingSyncOnItsCoordinatorIsRefusedWithAWarning() {
    let box = Locked<SyncCoordinator?>(nil)
    let (harness, a, b) = agreedPair { configuration in
      configuration.conflictResolver = { conflict in
        if let coordinator = box.withLock({ $0 }) {
          _ = coordinator.status
          coordinator.sync()
        }
        return .merged(.string("\(conflict.local?.logDescription ?? "") + \(conflict.remote?.logDescription ?? "")"))
      }
    }
    box.withLock { $0 = b.coordinator }
    defer { box.withLock { $0 = nil } }
    a.set(.string("from A"), "theme")
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)
    b.defaults.set("from B", forKey: "theme")  // announced: its push meets A's record as a conflict
    b.settle()
    #expect(b.warnings.contains { $0.contains("sync() called from this coordinator's conflict resolver: not run") })
    #expect(b.value("theme") == .string("\"from B\" + \"from A\""))
  }

  /// An event that arrives, on the cloud's thread, while the engine writes the store.
  @Test func anEventArrivingWhileTheEngineWritesIsApplied() {
    let (harness, a, b) = agreedPair()
    b.set(.string("from B"), "other")
    harness.cloud.upload()
    let cloud = harness.cloud
    cloud.duringNextWrite(to: "A") { cloud.download(to: "A") }
    a.set(.string("dusk"), "theme")  // A's push; B's value arrives meanwhile
    harness.cloud.waitForDeliveries()
    a.settle()
    #expect(a.value("other") == .string("from B"))
    harness.round()
    #expect(b.value("theme") == .string("dusk"))
  }
}

extension ReentrancyTests {
  /// A `Task` started by an observer of Zephyr's own write runs elsewhere: its edit is an
  /// edit, pushed (task-local markers would have made it look like Zephyr's own echo).
  @Test func anEditMadeFromATaskStartedInsideZephyrsWriteIsPushed() async {
    let (harness, a, b) = agreedPair()
    let defaults = UncheckedDefaults(b.defaults)
    let started = Locked(false)
    // The test awaits the task's edit without parking a thread: a thread blocked on it
    // would hold one of the few threads Swift's executor and the global queue share.
    let (edited, editDone) = AsyncStream<Void>.makeStream()
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: b.defaults, queue: nil
    ) { _ in
      guard defaults.value.string(forKey: "theme") == "dusk",
        started.withLock({
          let was = $0
          $0 = true
          return !was
        })
      else { return }
      Task {
        defaults.value.set("from a task", forKey: "other")
        editDone.finish()
      }
    }
    defer { NotificationCenter.default.removeObserver(token) }
    a.set(.string("dusk"), "theme")
    harness.cloud.upload()
    harness.cloud.download(to: "B")
    for await _ in edited {}
    b.settle()
    #expect(b.record("other")?.content == .value(.string("from a task")))
  }

  /// A resolver that waits for another thread which calls into the same coordinator: the
  /// call is queued for the running operation instead of waiting for it.
  @Test func aResolverWaitingForAnotherThreadThatCallsInDoesNotDeadlock() {
    let box = Locked<SyncCoordinator?>(nil)
    let (harness, a, b) = agreedPair { configuration in
      configuration.conflictResolver = { _ in
        if let coordinator = box.withLock({ $0 }) {
          let done = DispatchSemaphore(value: 0)
          // A thread of its own: a pooled one may not come while the resolver waits.
          Thread {
            coordinator.sync(keys: ["theme"])
            _ = coordinator.status
            done.signal()
          }.start()
          done.wait()
        }
        return .keepLocal
      }
    }
    box.withLock { $0 = b.coordinator }
    defer { box.withLock { $0 = nil } }
    a.set(.string("from A"), "theme")
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)
    b.defaults.set("from B", forKey: "theme")  // its push meets A's record: the resolver runs
    b.settle()
    #expect(b.record("theme")?.content == .value(.string("from B")))
  }
}

/// Hands a `UserDefaults` to a `@Sendable` observer block (it is thread-safe; corelibs does
/// not declare it `Sendable`).
private final class UncheckedDefaults: Sendable {
  nonisolated(unsafe) let value: UserDefaults
  init(_ value: UserDefaults) { self.value = value }
}

extension ReentrancyTests {
  /// The configured clock is app code: Zephyr reads it with no lock held, so a clock that
  /// reads the coordinator's status (a debug build stops on a call under a lock) returns,
  /// in a sync, an inbound event and a tombstone's date.
  @Test func aClockThatReadsTheCoordinatorIsCalledWithNoLockHeld() {
    let harness = Harness()
    let box = Locked<SyncCoordinator?>(nil)
    let reads = Locked(0)
    let clock: @Sendable () -> Date = {
      if let coordinator = box.withLock({ $0 }) {
        _ = coordinator.status
        reads.withLock { $0 += 1 }
      }
      return Date(timeIntervalSince1970: 1_000_000)
    }
    let a = harness.device("A", monitored: ["theme"]) { $0.clock = clock }
    let b = harness.device("B", monitored: ["theme"]) { $0.clock = clock }
    box.withLock { $0 = b.coordinator }
    a.set(.string("dusk"), "theme")
    harness.cloud.deliver()  // B's inbound event
    #expect(b.value("theme") == .string("dusk"))
    b.remove("theme")  // a tombstone dated by the clock
    b.coordinator.sync()
    #expect(b.record("theme")?.content == .deleted(Date(timeIntervalSince1970: 1_000_000)))
    #expect(reads.withLock { $0 } > 0)
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Edits of a key in quick succession make one store write per batch: the push waits
/// ``SyncConfiguration/coalescingInterval`` on the injected scheduler, so these tests fire
/// it by hand and never sleep.
struct CoalescingTests {
  private static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)

  /// A scheduler that keeps what it is given until the test fires it.
  final class ManualScheduler: Sendable {
    private let scheduled = Locked<[(delay: TimeInterval, action: @Sendable () -> Void)]>([])

    var delays: [TimeInterval] { scheduled.withLock { $0.map(\.delay) } }

    func schedule(after delay: TimeInterval, _ action: @escaping @Sendable () -> Void) {
      scheduled.withLock { $0.append((delay, action)) }
    }

    /// Runs every action scheduled so far, on this thread.
    func fire() {
      let due = scheduled.withLock { actions in
        defer { actions.removeAll() }
        return actions
      }
      for (_, action) in due { action() }
    }
  }

  private func device(_ harness: Harness, _ name: String, scheduler: ManualScheduler) -> TestDevice {
    harness.device(name) { configuration in
      configuration.coalescingInterval = 2
      configuration.coalescingScheduler = { scheduler.schedule(after: $0, $1) }
    }
  }

  private func storedIDs(_ device: TestDevice) -> Set<UInt32> {
    guard case .replica(let record) = RemoteState(storeValue: device.store.value(forKey: "read")),
      let value = record.state.value(strategy: .set, key: "read"), let ids = value.packedIds
    else { return [] }
    return Set(ids.map { UInt32($0) })
  }

  @Test func twentyInsertsInQuickSuccessionMakeOneStoreWrite() {
    let harness = Harness()
    let scheduler = ManualScheduler()
    let a = device(harness, "A", scheduler: scheduler)
    a.coordinator.insert(1, into: Self.read)
    scheduler.fire()
    a.settle()
    let writes = a.store.statistics.writes
    for id in UInt32(2)...21 { a.coordinator.insert(id, into: Self.read) }
    #expect(a.store.statistics.writes == writes, "an edit pushed before its batch ended")
    #expect(scheduler.delays == [2], "one push scheduled for the whole batch, after the interval")
    #expect(Set(a.coordinator[Self.read]) == Set(1...21), "every edit is in the suite at once")
    scheduler.fire()
    a.coordinator.waitForPendingLocalEdits()
    #expect(a.store.statistics.writes == writes + 1)
    #expect(storedIDs(a) == Set(1...21))
  }

  @Test func waitingForPendingLocalEditsPushesCoalescedEditsAtOnce() {
    let harness = Harness()
    let scheduler = ManualScheduler()
    let a = device(harness, "A", scheduler: scheduler)
    a.coordinator.insert(contentsOf: [5, 6, 7], into: Self.read)
    a.coordinator.waitForPendingLocalEdits()
    #expect(storedIDs(a) == [5, 6, 7])
    let writes = a.store.statistics.writes
    scheduler.fire()
    a.coordinator.waitForPendingLocalEdits()
    #expect(a.store.statistics.writes == writes, "the timer found nothing left to push")
  }

  @Test func editsCoalescedWhenTheAppQuitIsPushedByTheNextLaunchsSync() {
    let harness = Harness()
    let scheduler = ManualScheduler()
    let a = device(harness, "A", scheduler: scheduler)
    let b = harness.device("B")
    a.coordinator.insert(1, into: Self.read)
    a.settle()
    harness.round()
    a.coordinator.insert(contentsOf: [2, 3], into: Self.read)
    a.restart()  // the process ends before the batch's push; its timer goes with it
    scheduler.fire()
    a.coordinator.sync()
    a.settle()
    harness.round()
    #expect(Set(b.coordinator[Self.read]) == [1, 2, 3])
  }

  @Test func theDefaultIntervalCoalescesAndAZeroIntervalPushesEachEdit() {
    #expect(SyncConfiguration().coalescingInterval > 0)
    let harness = Harness()
    let scheduler = ManualScheduler()
    let a = harness.device("A") { configuration in
      configuration.coalescingInterval = 0
      configuration.coalescingScheduler = { scheduler.schedule(after: $0, $1) }
    }
    a.coordinator.insert(1, into: Self.read)
    a.settle()
    let writes = a.store.statistics.writes
    a.coordinator.insert(2, into: Self.read)
    a.settle()
    #expect(scheduler.delays.isEmpty)
    #expect(a.store.statistics.writes == writes + 1)
  }
}

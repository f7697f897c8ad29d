import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// `synchronize()` is called sparingly, as Apple asks: at launch, on returning
/// to the foreground, and after batches that wrote at most once per interval (by the
/// configured clock; the interval is long enough that its real-time timer never fires
/// during a test).
@Suite struct SynchronizeScheduleTests {
  private static let interval: TimeInterval = 3_600

  private func device(
    _ clock: ManualClock, configure: @escaping (inout SyncConfiguration) -> Void = { _ in }
  ) -> (Harness, TestDevice) {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme", "font"]) { configuration in
      configuration.clock = clock.reading
      configuration.synchronizeInterval = Self.interval
      configure(&configuration)
    }
    return (harness, a)
  }

  @Test func editsWithinTheIntervalShareOneSynchronize() {
    let clock = ManualClock()
    let (harness, a) = device(clock)
    let atLaunch = a.store.statistics.synchronizeCalls
    #expect(atLaunch == 1, "synchronize() at launch")

    a.set(.string("dusk"), "theme")
    #expect(a.store.statistics.synchronizeCalls == atLaunch + 1, "the first batch calls it at once")
    a.set(.string("dawn"), "theme")
    a.set(.string("serif"), "font")
    a.coordinator.sync()
    #expect(a.store.statistics.writes == 3)
    #expect(a.store.statistics.synchronizeCalls == atLaunch + 1, "batches within the interval wait")

    clock.advance(by: Self.interval + 1)
    a.coordinator.sync()  // writes nothing; the deferred call is due
    #expect(a.store.statistics.synchronizeCalls == atLaunch + 2)
    a.coordinator.sync()
    #expect(a.store.statistics.synchronizeCalls == atLaunch + 2, "nothing left to cover")
    withExtendedLifetime(harness) {}
  }

  @Test func aRelaunchSynchronizesWhateverTheInterval() {
    let clock = ManualClock()
    let (harness, a) = device(clock)
    a.set(.string("dusk"), "theme")
    a.set(.string("dawn"), "theme")
    let before = a.store.statistics.synchronizeCalls
    a.restart()
    #expect(a.store.statistics.synchronizeCalls == before + 1)
    withExtendedLifetime(harness) {}
  }

  @Test func withTheZephyr5FlagOffBatchesNeverSynchronize() {
    let clock = ManualClock()
    let (harness, a) = device(clock) { $0.synchronizeOnChange = false }
    a.set(.string("dusk"), "theme")
    clock.advance(by: Self.interval + 1)
    a.set(.string("dawn"), "theme")
    #expect(a.store.statistics.writes == 2)
    #expect(a.store.statistics.synchronizeCalls == 1, "only the launch's")
    withExtendedLifetime(harness) {}
  }

  @Test func aZeroIntervalSynchronizesAfterEveryBatchThatWrote() {
    let clock = ManualClock()
    let (harness, a) = device(clock) { $0.synchronizeInterval = 0 }
    a.set(.string("dusk"), "theme")
    a.set(.string("dawn"), "theme")
    a.coordinator.sync()  // writes nothing
    #expect(a.store.statistics.synchronizeCalls == 3)
    withExtendedLifetime(harness) {}
  }

  @Test func theScheduleCoversBatchesUntilTheIntervalEnds() {
    var schedule = SynchronizeSchedule()
    let start = Date(timeIntervalSince1970: 0)
    #expect(schedule.decide(wrote: true, now: start, interval: 10) == .callNow)
    #expect(schedule.decide(wrote: true, now: start + 1, interval: 10) == .arm(after: 9))
    #expect(schedule.decide(wrote: true, now: start + 2, interval: 10) == .none, "one timer")
    #expect(schedule.decide(wrote: false, timerFired: true, now: start + 10, interval: 10) == .callNow)
    #expect(schedule.decide(wrote: false, now: start + 11, interval: 10) == .none)
    // A clock set back starts a new interval rather than deferring for the time it jumped.
    #expect(schedule.decide(wrote: true, now: start - 100, interval: 10) == .arm(after: 10))
  }
}

import Foundation
import Observation
import Testing
import ZephyrTesting

@testable import Zephyr

/// `changes(of:)` and `SyncedValue`: the current value, then every change, local or
/// remote; finished when the coordinator is released.
struct ChangeStreamTests {
  @Test(.timeLimit(.minutes(1)))
  func aStreamYieldsTheCurrentValueThenLocalAndRemoteChangesAndFinishesOnRelease() async {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B")
    a.coordinator[Keys.theme] = "dusk"
    a.settle()

    var changes = a.coordinator.changes(of: Keys.theme).makeAsyncIterator()
    #expect(await changes.next() == "dusk", "the current value first")

    a.coordinator[Keys.theme] = "typed"
    #expect(await changes.next() == "typed", "a typed set")

    a.set(.string("plain"), "theme")
    #expect(await changes.next() == "plain", "an edit the engine noticed")

    harness.cloud.deliver()
    b.coordinator[Keys.theme] = "remote"
    b.settle()
    harness.cloud.deliver()
    #expect(await changes.next() == "remote", "a pull")

    a.coordinator.removeValue(for: Keys.theme)
    #expect(await changes.next() == "light", "a delete reads as the default")

    a.shutDown()
    #expect(await changes.next() == nil, "finished when the coordinator is released")
  }

  @Test func aStreamSkipsValuesEqualToTheLastOne() async {
    let harness = Harness()
    let a = harness.device("A")
    var changes = a.coordinator.changes(of: Keys.count).makeAsyncIterator()
    #expect(await changes.next() == 7)
    a.coordinator[Keys.count] = 1
    a.coordinator[Keys.count] = 1
    a.settle()  // the push of 1 reports 1 again: not yielded
    a.coordinator[Keys.count] = 2
    #expect(await changes.next() == 1)
    #expect(await changes.next() == 2)
  }

  @Test func cancellingTheIteratingTaskRemovesTheStream() async {
    let harness = Harness()
    let a = harness.device("A")
    let stream = a.coordinator.changes(of: Keys.theme)
    let task = Task {
      var count = 0
      for await _ in stream { count += 1 }
      return count
    }
    task.cancel()
    _ = await task.value
    #expect(a.coordinator.changeObservers.withLock { $0.observedKeys }.isEmpty)
  }

  @MainActor @Test(.timeLimit(.minutes(1)))
  func aSyncedValueFollowsAnInboundChangeOnTheMainActor() async {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B")
    let model = SyncedValue(Keys.theme, coordinator: a.coordinator)
    #expect(model.value == "light")

    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      withObservationTracking {
        _ = model.value
      } onChange: {
        continuation.resume()
      }
      b.coordinator[Keys.theme] = "dusk"
      b.settle()
      harness.cloud.deliver()
    }
    #expect(model.value == "dusk")

    model.value = "night"
    #expect(a.defaults.string(forKey: "theme") == "night", "a set writes UserDefaults at once")
    a.settle()
    harness.cloud.deliver()
    #expect(b.coordinator[Keys.theme] == "night")
  }

  @MainActor @Test func aSyncedValueOfAnOptionalKeyShowsTheDefaultAfterNil() {
    let harness = Harness()
    let a = harness.device("A")
    let model = SyncedValue(SyncKey<String?>("nickname", default: "anonymous"), coordinator: a.coordinator)
    model.value = "kit"
    #expect(model.value == "kit")
    model.value = nil
    #expect(model.value == "anonymous")
    #expect(a.value("nickname") == nil)
  }
}

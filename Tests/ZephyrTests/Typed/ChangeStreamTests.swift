import Foundation
import Observation
import Testing
import ZephyrTesting

@testable import Zephyr

/// `changes(of:)` and `SyncedValue`: the current value, then every change, local or
/// remote; finished when the coordinator is released.
// Serialized: its tests block on deliveries and pushes. Side by side with the randomized
// scenarios on a two-core machine, some waited minutes for a thread (no time limit here:
// it failed them for that wait).
@Suite(.serialized)
struct ChangeStreamTests {
  @Test
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

  /// 1 is set twice and pushed, and yielded once: the next value is 2. (2 is set only
  /// after 1 was yielded: a value replaced before its delivery may be skipped, and the
  /// push's delivery, on Zephyr's thread, can run after `settle()` returns. Set at once,
  /// 2 could be read in place of 1, and the wait for 2 never end.)
  @Test func aStreamSkipsValuesEqualToTheLastOne() async {
    let harness = Harness()
    let a = harness.device("A")
    var changes = a.coordinator.changes(of: Keys.count).makeAsyncIterator()
    #expect(await changes.next() == 7)
    a.coordinator[Keys.count] = 1
    a.coordinator[Keys.count] = 1
    a.settle()  // the push of 1 reports 1 again: not yielded
    #expect(await changes.next() == 1)
    a.coordinator[Keys.count] = 2
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
    #expect(a.coordinator.engine.changeObservers.withLock { $0.observedKeys }.isEmpty)
  }

  /// The change arrives on the store's thread; the model applies it on the main actor and
  /// the Observation framework sees it. The test blocks only off the main actor (its
  /// waits for the push and the delivery run in a detached task), so the main actor stays
  /// free to apply the change, and it waits for the model in bounded turns, never forever.
  @MainActor @Test
  func aSyncedValueFollowsAnInboundChangeOnTheMainActor() async {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B")
    let model = SyncedValue(Keys.theme, coordinator: a.coordinator)
    #expect(model.value == "light")

    let observed = Locked(false)
    withObservationTracking {
      _ = model.value
    } onChange: {
      observed.withLock { $0 = true }
    }
    let (bCoordinator, cloud) = (b.coordinator, harness.cloud)
    await Task.detached {
      bCoordinator[Keys.theme] = "dusk"
      bCoordinator.waitForPendingLocalEdits()
      cloud.deliver()
    }.value
    var turns = 0
    while model.value != "dusk", turns < 1_000 {  // the model applies it on the main actor
      await Task.yield()
      turns += 1
    }
    #expect(model.value == "dusk")
    #expect(observed.withLock { $0 }, "the Observation framework saw the change")

    model.value = "night"
    #expect(a.defaults.string(forKey: "theme") == "night", "a set writes UserDefaults at once")
    let aCoordinator = a.coordinator
    await Task.detached {
      aCoordinator.waitForPendingLocalEdits()
      cloud.deliver()
    }.value
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

/// A `UserDefaults` that runs an action right after its next read of one key, while the
/// value read is still on its way to the caller: a write landing between a stream's read
/// and its delivery, made deterministic.
private final class ReadHookDefaults: UserDefaults {
  private let hook = Locked<(key: String, action: @Sendable () -> Void)?>(nil)

  /// Runs `action` once, inside the next `object(forKey: key)`, after the value is read.
  func afterNextRead(of key: String, _ action: @escaping @Sendable () -> Void) {
    hook.withLock { $0 = (key, action) }
  }

  override func object(forKey defaultName: String) -> Any? {
    let value = super.object(forKey: defaultName)
    let action = hook.withLock { hook -> (@Sendable () -> Void)? in
      guard let pending = hook, pending.key == defaultName else { return nil }
      hook = nil
      return pending.action
    }
    action?()
    return value
  }
}

/// A coordinator over a ``ReadHookDefaults`` suite, holding `theme = "old"`. The
/// coordinator is held here only, so that ``release()`` finishes its streams.
private final class StreamOrderSetup: Sendable {
  let suiteName = "zephyr-tests.stream-order.\(UUID().uuidString.prefix(8))"
  // UserDefaults is thread-safe; swift-corelibs-foundation does not say so.
  nonisolated(unsafe) let defaults: ReadHookDefaults
  private let coordinator: Locked<SyncCoordinator?>
  private let ledgers: URL

  init() throws {
    defaults = try #require(ReadHookDefaults(suiteName: suiteName))
    ledgers = FileManager.default.temporaryDirectory.appendingPathComponent(suiteName)
    let coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName,
      store: SimulatedCloud(delivery: .callingThread).device("A", initiallyDownloaded: true),
      configuration: SyncConfiguration(deviceID: "A", logHandler: { _ in }, ledgerDirectory: ledgers))
    coordinator[Keys.theme] = "old"
    coordinator.waitForPendingLocalEdits()
    self.coordinator = Locked(coordinator)
  }

  deinit {
    release()  // first: a live coordinator would take the removal for a reset
    defaults.removePersistentDomain(forName: suiteName)
    try? FileManager.default.removeItem(at: ledgers)
  }

  func changes() -> AsyncStream<String> {
    coordinator.withLock { $0 }?.changes(of: Keys.theme) ?? AsyncStream { $0.finish() }
  }

  func set(_ theme: String) {
    coordinator.withLock { $0 }?[Keys.theme] = theme
  }

  /// Sets `theme` from a thread of its own, and returns once the set has returned.
  func setOnAnotherThread(_ theme: String) {
    let landed = DispatchSemaphore(value: 0)
    Thread {
      self.set(theme)
      landed.signal()
    }.start()
    landed.wait()
  }

  /// Releases the coordinator, which finishes its streams.
  func release() {
    let released = coordinator.withLock { coordinator in
      defer { coordinator = nil }
      return coordinator
    }
    released?.waitForPendingLocalEdits()
  }
}

/// The order a stream yields in when writes race its reads: always the order they were
/// written in, ending on the value `UserDefaults` holds.
extension ChangeStreamTests {
  @Test
  func aSetLandingBetweenTheReadAndTheDeliveryOfAValueIsYieldedAfterIt() async throws {
    let setup = try StreamOrderSetup()
    setup.defaults.afterNextRead(of: "theme") { [weak setup] in setup?.set("new") }

    var changes = setup.changes().makeAsyncIterator()
    #expect(await changes.next() == "old", "the value read when the stream started")
    #expect(await changes.next() == "new", "then the set that landed before it was delivered")
    #expect(setup.defaults.string(forKey: "theme") == "new")
    setup.release()
    #expect(await changes.next() == nil, "nothing older follows: the stream ended on new")
  }

  @Test
  func aSetFromAnotherThreadBetweenTheFirstReadAndItsDeliveryIsYieldedAfterIt() async throws {
    let setup = try StreamOrderSetup()
    // Another publisher, while this thread delivers the current value.
    setup.defaults.afterNextRead(of: "theme") { [weak setup] in setup?.setOnAnotherThread("new") }

    var changes = setup.changes().makeAsyncIterator()
    #expect(await changes.next() == "old")
    #expect(await changes.next() == "new")
    setup.release()
    #expect(await changes.next() == nil)
  }

  @Test
  func aSetFromAnotherThreadDuringADeliveryIsYieldedAfterIt() async throws {
    let setup = try StreamOrderSetup()
    var changes = setup.changes().makeAsyncIterator()
    #expect(await changes.next() == "old")
    // This thread delivers "dusk"; another thread's set lands between its read and its
    // yield, and is not delivered ahead of it.
    setup.defaults.afterNextRead(of: "theme") { [weak setup] in setup?.setOnAnotherThread("night") }

    setup.set("dusk")

    #expect(await changes.next() == "dusk")
    #expect(await changes.next() == "night")
    setup.release()
    #expect(await changes.next() == nil)
  }
}

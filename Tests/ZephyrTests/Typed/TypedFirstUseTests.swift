import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A typed key is monitored only from its first use, so a value that reached the device
/// before then (the initial download of a new install, a change whose event was
/// dropped) arrives with no event for it. The first use reconciles the key.
// Serialized: its tests block on deliveries and pushes. Side by side with the randomized
// scenarios on a two-core machine, some waited minutes for a thread (no time limit here:
// it failed them for that wait).
@Suite(.serialized)
struct TypedFirstUseTests {
  /// A sets theme and uploads it; B is a new install whose initial download arrives
  /// before the app first reads the key (B follows no key, so the event changes nothing).
  /// Returns the harness: B is `harness.device("B")`, alive as long as the harness.
  private func newInstallDownloadedBeforeFirstUse() -> Harness {
    let harness = Harness()
    let a = harness.device("A")
    a.coordinator[Keys.theme] = "dusk"
    a.settle()
    harness.cloud.upload()
    let b = harness.device("B", initiallyDownloaded: false)
    b.coordinator.sync()  // at launch, before the store's initial download
    harness.cloud.download(to: "B")  // initialSync: theme is not monitored yet
    harness.cloud.waitForDeliveries()
    return harness
  }

  @Test func aFirstReadPullsAValueThatArrivedWithTheInitialDownload() {
    let harness = newInstallDownloadedBeforeFirstUse()
    let b = harness.device("B")
    #expect(b.value("theme") == nil, "nothing pulled it yet")

    _ = b.coordinator[Keys.theme]  // the first use: the settings screen reads the key
    b.settle()

    #expect(b.coordinator[Keys.theme] == "dusk")
    #expect(b.defaults.string(forKey: "theme") == "dusk")
    #expect(b.coordinator.monitoredKeys.contains("theme"))
  }

  @Test
  func aFirstStreamYieldsTheValueThatArrivedBeforeIt() async {
    let harness = newInstallDownloadedBeforeFirstUse()
    let b = harness.device("B")
    var changes = b.coordinator.changes(of: Keys.theme).makeAsyncIterator()
    #expect(await changes.next() == "light", "the value held at first use")
    #expect(await changes.next() == "dusk", "then the value the first use pulled")
  }

  @MainActor @Test func aFirstSyncedValueShowsTheValueThatArrivedBeforeIt() async {
    let harness = newInstallDownloadedBeforeFirstUse()
    let b = harness.device("B")
    let model = SyncedValue(Keys.theme, coordinator: b.coordinator)
    #expect(model.value == "light", "the value held at first use")

    // The first use's reconcile pulls, and the model's stream has the value (waited for
    // off the main actor, which stays free to apply it).
    let coordinator = b.coordinator
    await Task.detached { coordinator.waitForPendingLocalEdits() }.value
    var turns = 0
    while model.value != "dusk", turns < 1_000 {  // the model applies it on the main actor
      await Task.yield()
      turns += 1
    }
    #expect(model.value == "dusk")
  }

  @Test func aFirstReadPullsAValueWhoseEventWasDropped() {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    a.coordinator[Keys.count] = 3
    a.settle()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)  // the event never reaches B

    #expect(b.coordinator[Keys.count] == 3, "the first read reconciles the key before it returns")
    #expect(b.defaults.integer(forKey: "count") == 3)
  }

  @Test func aFirstReadPushesAValueTheCloudNeverHad() {
    let harness = Harness(world: .linuxPlain)  // a write Zephyr is not told about
    let a = harness.device("A")
    a.defaults.set("from plain code", forKey: "theme")

    _ = a.coordinator[Keys.theme]
    a.settle()

    #expect(a.record("theme")?.content == .value(.string("from plain code")))
  }

  @Test func aFirstUseOfAKeyThatCannotSyncReconcilesNothing() {
    let harness = Harness()
    let a = harness.device("A")
    let long = SyncKey<String>(String(repeating: "k", count: 65), default: "short")
    let before = a.store.statistics

    #expect(a.coordinator[long] == "short")
    a.settle()

    #expect(a.store.statistics == before)
    #expect(a.coordinator.status.refusedKeys[long.name] == .keyTooLong(bytes: 65, limit: 64))
  }
}

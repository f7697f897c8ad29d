import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A new install's store discards writes made before its initial download: an app can
/// see whether that download has happened, and wait for it before writing first-launch
/// values. Timeouts are measured by an injected
/// `sleep`: none of these tests sleeps.
@Suite struct InitialDownloadTests {
  /// A `sleep` that returns only when its task is cancelled (the wait ended otherwise):
  /// the download decides.
  private static let never: @Sendable (Duration) async throws -> Void = { _ in
    let (stream, continuation) = AsyncStream<Void>.makeStream()
    for await _ in stream {}
    withExtendedLifetime(continuation) {}
  }

  @Test(arguments: Backend.allCases)
  func aNewInstallIsPendingUntilTheInitialDownloadThenDone(backend: Backend) async {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"], initiallyDownloaded: false) { $0.sleep = { _ in } }
    harness.driver.setServerValue(.string("from the cloud"), forKey: "other")
    #expect(a.coordinator.status.initialDownload == .pending)
    #expect(await a.coordinator.waitForInitialDownload(timeout: .seconds(10)) == .pending, "no download yet")

    harness.driver.download(to: "A")  // initialSync
    a.settle()
    #expect(a.coordinator.status.initialDownload == .done)
    #expect(await a.coordinator.waitForInitialDownload(timeout: .seconds(10)) == .done)
    a.restart()
    #expect(a.coordinator.status.initialDownload == .done, "a relaunch forgot the download")
  }

  @Test(arguments: Backend.allCases)
  func aWaiterIsResumedByTheDownload(backend: Backend) async {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"], initiallyDownloaded: false) { $0.sleep = Self.never }
    let coordinator = a.coordinator
    let waiting = Task { await coordinator.waitForInitialDownload(timeout: .seconds(10)) }
    harness.driver.download(to: "A")
    #expect(await waiting.value == .done)
  }

  @Test(arguments: Backend.allCases)
  func anAccountChangeIsTheNewAccountsDownload(backend: Backend) async {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"], initiallyDownloaded: false) { $0.sleep = Self.never }
    #expect(a.coordinator.status.initialDownload == .pending)
    harness.driver.switchAccount(of: "A", to: "other")
    a.settle()
    #expect(a.coordinator.status.initialDownload == .done)
    #expect(await a.coordinator.waitForInitialDownload(timeout: .seconds(10)) == .done)
  }

  @Test(arguments: Backend.allCases)
  func aDeviceThatNeverGetsTheEventTimesOutPending(backend: Backend) async {
    let harness = Harness(backend: backend)
    let slept = Locked<[Duration]>([])
    let a = harness.device("A", monitored: ["theme"], initiallyDownloaded: false) { configuration in
      configuration.sleep = { duration in slept.withLock { $0.append(duration) } }  // the timeout passes at once
    }
    #expect(await a.coordinator.waitForInitialDownload(timeout: .seconds(10)) == .pending)
    #expect(slept.withLock { $0 } == [.seconds(10)])
    #expect(a.coordinator.status.initialDownload == .pending)
  }

  @Test(arguments: Backend.allCases)
  func cancellingTheWaitEndsIt(backend: Backend) async {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"], initiallyDownloaded: false) { $0.sleep = Self.never }
    let coordinator = a.coordinator
    let waiting = Task { await coordinator.waitForInitialDownload(timeout: .seconds(10)) }
    waiting.cancel()
    #expect(await waiting.value == .pending)
  }

  /// An install that synced before this version recorded downloads is not new: the wait
  /// returns at once.
  @Test(arguments: Backend.allCases)
  func anInstallThatSyncedBeforeIsNotPending(backend: Backend) async {
    let harness = Harness(backend: backend)
    let a = harness.device("A", monitored: ["theme"]) { $0.sleep = Self.never }
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    a.restart()
    #expect(a.coordinator.status.initialDownload == .unknown)
    #expect(await a.coordinator.waitForInitialDownload(timeout: .seconds(10)) == .unknown)
  }
}

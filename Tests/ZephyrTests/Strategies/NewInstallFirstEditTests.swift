import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 32, item 1: a new install's first edit of a strategy key, made from a read of
/// it (`c[key] = c[key] + ["c"]`), adds to the cloud's state whenever the first use's
/// reconcile runs: before the read returns, between the read and the write, or after
/// the write. Before the fix the outcome depended on that timing: the reconcile landing
/// between the two made the write an edit over a state the read never returned, which
/// removed the cloud's favorites ("both devices end with ["c"]").
@Suite(.serialized)
struct NewInstallFirstEditTests {
  static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)

  /// When the first use's reconcile runs, relative to the app's read and write.
  enum Timing: String, CaseIterable, CustomStringConvertible {
    /// As it happens to run (the app does nothing to order them).
    case asItHappens
    /// Between the read and the write: the read returned the value held before it.
    case betweenReadAndWrite
    var description: String { rawValue }
  }

  @Test(arguments: Timing.allCases)
  func aNewInstallsFirstFavoriteAddsToTheCloud(timing: Timing) {
    for repetition in 0..<30 {
      expectFirstFavoriteAdds(timing: timing, repetition: repetition)
    }
  }

  /// The same, while other threads keep the machine's cores busy.
  @Test func aNewInstallsFirstFavoriteAddsToTheCloudOnABusyMachine() {
    let stop = Locked(false)
    let spinners = (0..<3).map { _ in
      Thread {
        var spin = 0
        while !stop.withLock({ $0 }) { spin &+= 1 }
      }
    }
    for spinner in spinners { spinner.start() }
    defer { stop.withLock { $0 = true } }
    for repetition in 0..<30 {
      expectFirstFavoriteAdds(timing: .asItHappens, repetition: repetition)
    }
  }

  private func expectFirstFavoriteAdds(timing: Timing, repetition: Int) {
    let harness = Harness()
    let a = harness.device("A")
    a.coordinator[Self.favorites] = ["a", "b"]
    a.settle()
    harness.cloud.upload()
    let c = harness.device("C", initiallyDownloaded: false)
    harness.cloud.download(to: "C")  // the initial download: favorites not used yet
    harness.cloud.waitForDeliveries()

    let read = c.coordinator[Self.favorites]
    if timing == .betweenReadAndWrite { c.settle() }
    c.coordinator[Self.favorites] = read + ["c"]
    c.settle()
    for _ in 0..<3 { harness.round() }

    let expected: Set = ["a", "b", "c"]
    #expect(Set(a.coordinator[Self.favorites]) == expected, "repetition \(repetition), \(timing)")
    #expect(Set(c.coordinator[Self.favorites]) == expected, "repetition \(repetition), \(timing)")
  }
}

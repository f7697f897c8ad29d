import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Presumed local values of strategy keys (see `SyncCoordinator.agreedLocalValues(of:)`)
/// meeting a reset of the domain.
struct PresumedReadTests {
  static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)
  static let starred = SyncKey<PackedSet<UInt32>>("starred", default: [], merge: .set)

  /// The app resets its defaults (removePersistentDomain) while an inbound change is
  /// being decided. The presumed keys are first read then, and found missing: the read's
  /// epoch tells a reset, which clears the history, so that they are decided as on a new
  /// install (pulled), never pushed as removed.
  @Test func aDomainResetDuringAnInboundChangeDoesNotWipeTheCloud() {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: ["read": [1, 2], "starred": [7, 8]])
    #expect(b.coordinator[Self.read] == [1, 2])
    #expect(b.coordinator[Self.starred] == [7, 8])

    nonisolated(unsafe) let defaults = b.defaults
    let suite = b.suiteName
    let calls = Locked(0)
    b.coordinator.engine.testHooks.withLock { hooks in
      hooks.beforePullWrite = { _ in
        guard
          calls.isFirstCall()
        else { return }
        defaults.removePersistentDomain(forName: suite)  // the app resets its defaults
      }
    }
    a.coordinator.insert(10, into: Self.read)
    a.settle()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)
    // The store says both keys (as an initial sync or a coalesced event may).
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["read", "starred"]), to: "B")
    harness.cloud.waitForDeliveries()
    b.coordinator.engine.testHooks.withLock { $0.beforePullWrite = nil }
    b.settle()
    harness.cloud.deliver()
    a.settle()
    harness.cloud.deliver()
    #expect(a.coordinator[Self.starred] == [7, 8], "a reset on B wiped starred from the cloud")
    #expect(a.coordinator[Self.read] == [1, 2, 10], "a reset on B removed read's elements everywhere")
    b.coordinator.sync()
    #expect(b.coordinator[Self.read] == [1, 2, 10])
    #expect(b.coordinator[Self.starred] == [7, 8])
  }
}

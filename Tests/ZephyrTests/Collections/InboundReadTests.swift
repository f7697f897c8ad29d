import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// An inbound change of a strategy key whose local value is still the one its ledger
/// agreed on reads that value from `UserDefaults` once, just before writing, and decides
/// from the agreed state; a value found changed then is decided again from what was read.
struct InboundReadTests {
  static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)

  /// Device B of `harness`, over counting defaults.
  static func countingDevice(_ harness: Harness) -> (SyncCoordinator, ReadCountingDefaults, String) {
    let suiteName = "zephyr-tests.counting.\(UUID().uuidString.prefix(8))"
    guard let defaults = ReadCountingDefaults(suiteName: suiteName) else {
      preconditionFailure("cannot open \(suiteName)")
    }
    let coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: harness.cloud.device("B"),
      configuration: SyncConfiguration(deviceID: "B", ledgerDirectory: harness.ledgerDirectory))
    _ = coordinator[read]  // declares the key's strategy
    coordinator.addKeysToBeMonitored(keys: [read.name])
    return (coordinator, defaults, suiteName)
  }

  @Test func anInboundChangeReadsTheAgreedLocalValueOnce() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["read"])
    let (b, defaults, suiteName) = Self.countingDevice(harness)
    defer { defaults.removePersistentDomain(forName: suiteName) }
    a.coordinator.insert(contentsOf: [1, 2, 3], into: Self.read)
    a.settle()
    harness.cloud.deliver()
    #expect(b[Self.read] == [1, 2, 3])

    for id: UInt32 in 4...6 {
      a.coordinator.insert(id, into: Self.read)
      a.settle()
      let before = defaults.reads(of: "read")
      harness.cloud.deliver()
      #expect(defaults.reads(of: "read") - before == 1, "one read of the key for the inbound change of \(id)")
      #expect(b[Self.read] == PackedSet(1...id))
    }
    #expect(a.coordinator[Self.read] == PackedSet(1...6))
  }

  @Test func anEditMadeWhileAStrategyKeysPullWasDecidedIsMergedNotOverwritten() {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: [1, 2])
    #expect(b.coordinator[Self.read] == [1, 2])

    let coordinator = b.coordinator
    let calls = Locked(0)
    coordinator.engine.testHooks.withLock { hooks in
      hooks.beforePullWrite = { [weak coordinator] key in
        guard key == "read", let coordinator,
          calls.isFirstCall()
        else { return }
        coordinator.insert(20, into: Self.read)
      }
    }
    a.coordinator.insert(10, into: Self.read)
    a.settle()
    harness.cloud.deliver()
    coordinator.engine.testHooks.withLock { $0.beforePullWrite = nil }
    #expect(calls.withLock { $0 } == 2, "the pull was decided again from the edited value")
    #expect(b.debugLines.contains { $0.contains("found edited since agreed: decided again") })
    b.settle()
    harness.cloud.deliver()
    a.settle()
    #expect(b.coordinator[Self.read] == [1, 2, 10, 20])
    #expect(a.coordinator[Self.read] == [1, 2, 10, 20])
  }

  @Test func anInboundChangeMeetsATypedInsertNotYetPushed() {
    let harness = Harness()
    let scheduler = CoalescingTests.ManualScheduler()
    let (a, b) = harness.devicesAgreeing(on: [1, 2]) { configuration in
      configuration.coalescingScheduler = { scheduler.schedule(after: $0, $1) }
    }
    b.coordinator.insert(20, into: Self.read)  // waits for its coalesced push
    a.coordinator.insert(10, into: Self.read)
    a.settle()
    harness.cloud.deliver()
    #expect(b.coordinator[Self.read] == [1, 2, 10, 20], "\(b.debugLines)")
    scheduler.fire()
    b.settle()
    harness.cloud.deliver()
    #expect(a.coordinator[Self.read] == [1, 2, 10, 20])
  }

  /// A value another instance of the suite wrote (another process, which posts nothing
  /// here) is not the agreed one: the inbound change is decided again from it.
  @Test func anInboundChangeMeetsAValueWrittenUnseen() throws {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: [1, 2])
    let other = try #require(AppleFaithfulDefaults(suiteName: b.suiteName))
    let edited = try #require(try PackedSet<UInt32>([1, 2, 20]).propertyList)
    other.set(edited.foundationValue, forKey: "read")
    a.coordinator.insert(10, into: Self.read)
    a.settle()
    harness.cloud.deliver()
    #expect(b.coordinator[Self.read] == [1, 2, 10, 20])
    b.settle()
    harness.cloud.deliver()
    #expect(a.coordinator[Self.read] == [1, 2, 10, 20])
  }
}

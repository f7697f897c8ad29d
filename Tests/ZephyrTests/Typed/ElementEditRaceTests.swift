import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// An element edit reads the key, edits the set, and writes it back, on the app's
/// thread; a pull of the same key may be written in between, or land around the edit's
/// write. Neither the pulled element nor the edit is lost.
struct ElementEditRaceTests {
  static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)

  /// A pull written between an insert's read and its write: the insert's value would lack
  /// the pulled element, and the next push would count that as this device removing it
  /// (before the fix, 10 was removed everywhere). The insert reads again.
  @Test func aPullWrittenDuringAnInsertIsNotRemoved() {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: [1, 2])
    a.coordinator.insert(10, into: Self.read)
    a.settle()

    let cloud = harness.cloud
    b.coordinator.engine.testHooks.withLock { hooks in
      hooks.betweenElementReadAndWrite = { _ in cloud.deliver() }
    }
    b.coordinator.insert(20, into: Self.read)
    b.coordinator.engine.testHooks.withLock { $0.betweenElementReadAndWrite = nil }
    b.settle()
    harness.cloud.deliver()
    a.settle()
    #expect(b.coordinator[Self.read] == [1, 2, 10, 20])
    #expect(a.coordinator[Self.read] == [1, 2, 10, 20])
    #expect(b.debugLines.contains { $0.contains("the key was written meanwhile, read it again") })
  }

  /// A pull decided while an insert's write is about to land (recorded, not yet in
  /// `UserDefaults`): the pull's write could land after it and replace it, so the pull
  /// leaves the key to the insert's push, which merges both.
  @Test func aPullDoesNotWriteOverAnInsertAboutToLand() throws {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: [1, 2])
    a.coordinator.insert(10, into: Self.read)
    a.settle()

    let defaults = try #require(b.defaults as? AppleFaithfulDefaults)
    let cloud = harness.cloud
    let first = Locked(true)
    defaults.writeInterceptor = { write in
      // B's insert is about to write: the pull of A's insert runs now, to the end.
      let isFirst = first.withLock { wasFirst in
        defer { wasFirst = false }
        return wasFirst
      }
      if write == .set(key: "read"), isFirst { cloud.deliver() }
      return true
    }
    b.coordinator.insert(20, into: Self.read)
    defaults.writeInterceptor = nil
    #expect(b.debugLines.contains { $0.contains("keep read: set locally since the batch read it") })
    b.settle()
    harness.cloud.deliver()
    a.settle()
    #expect(b.coordinator[Self.read] == [1, 2, 10, 20])
    #expect(a.coordinator[Self.read] == [1, 2, 10, 20])
  }

  /// Inserts on one thread while the other device's inserts are delivered on another:
  /// every element ends on both devices.
  @Test func insertsRacingPullsLoseNothing() {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: [])
    let coordinator = b.coordinator
    let inserting = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      for id in UInt32(1_000)..<1_060 { coordinator.insert(id, into: Self.read) }
      inserting.signal()
    }
    for id in UInt32(1)...30 {
      a.coordinator.insert(id, into: Self.read)
      a.settle()
      harness.cloud.deliver()
    }
    inserting.wait()
    for _ in 0..<3 {
      b.settle()
      a.settle()
      harness.cloud.deliver()
    }
    let expected = PackedSet<UInt32>(Array(1...30) + Array(1_000..<1_060))
    #expect(b.coordinator[Self.read] == expected)
    #expect(a.coordinator[Self.read] == expected)
  }
}

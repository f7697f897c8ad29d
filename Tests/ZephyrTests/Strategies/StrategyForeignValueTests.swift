import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 32, item 3: a store value a strategy cannot merge (a `String` written by other
/// code under a `.set` key) blocked the key for good: each device kept its own value.
/// Now the next local edit replaces it, as for a last-writer-wins key; until then
/// `status` names the key; devices never diverge.
struct StrategyForeignValueTests {
  static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)

  @Test(arguments: World.allCases)
  func theNextEditReplacesAValueTheStrategyCannotMerge(world: World) {
    let harness = Harness(world: world)
    let a = harness.device("A")
    let b = harness.device("B")
    a.coordinator[Self.favorites] = ["one", "two"]
    a.settle()
    harness.round()
    #expect(b.coordinator[Self.favorites] == ["one", "two"])

    harness.cloud.setServerValue(.string("not a list"), forKey: "favorites")
    harness.round()
    for device in [a, b] {
      #expect(device.coordinator[Self.favorites] == ["one", "two"], "a value it cannot merge is not taken")
      #expect(
        device.coordinator.status.refusedKeys["favorites"]
          == .strategyCannotMerge(strategy: "set", value: "string in the store"))
    }

    a.coordinator[Self.favorites] = ["one", "two", "three"]
    a.settle()
    for _ in 0..<3 { harness.round() }
    for device in [a, b] {
      #expect(device.coordinator[Self.favorites] == ["one", "two", "three"], "\(device.name)")
      #expect(device.coordinator.status.refusedKeys["favorites"] == nil, "\(device.name)")
    }
    if case .replica = RemoteState(storeValue: harness.cloud.serverValues["favorites"]) {
    } else {
      Issue.record("the store holds \(String(describing: harness.cloud.serverValues["favorites"]))")
    }
    let writes = [a, b].map { $0.store.statistics.writes }
    harness.round()
    #expect([a, b].map { $0.store.statistics.writes } == writes, "a quiet round writes nothing")
  }

  /// The same with the edit made on the device that had never synced the key: its first
  /// value replaces the store's and the other device takes it.
  @Test func aFirstUploadReplacesAValueTheStrategyCannotMerge() {
    let harness = Harness()
    harness.cloud.setServerValue(.integer(42), forKey: "favorites")
    let a = harness.device("A")
    let b = harness.device("B")
    harness.round()
    a.coordinator[Self.favorites] = ["x"]
    a.settle()
    for _ in 0..<3 { harness.round() }
    #expect(a.coordinator[Self.favorites] == ["x"])
    #expect(b.coordinator[Self.favorites] == ["x"])
  }
}

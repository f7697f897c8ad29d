import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 32, item 2: a `.set` or `.union` array keeps the order its writer gave. Before,
/// a `.set` state kept each write's elements by fingerprint, so `["a", "b", "c"]` read
/// as `["a", "c", "b"]` on every other device.
///
/// The rule: the elements each write added keep the order the writer's array gave them;
/// writes follow each other oldest first (by generation, then writer), so additions made
/// concurrently come after what both devices had, in the same order on every device.
struct SetOrderTests {
  static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)
  static let tags = SyncKey<[String]>("tags", default: [], merge: .union)

  @Test(arguments: [favorites, tags])
  func anArrayReplicatedWithoutAConcurrentEditKeepsItsOrder(key: SyncKey<[String]>) {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    let c = harness.device("C")
    let written = ["zebra", "apple", "mango", "kiwi", "banana", "cherry"]
    a.coordinator[key] = written
    a.settle()
    harness.round()
    for device in [a, b, c] { #expect(device.coordinator[key] == written, "\(device.name)") }

    // An element added at the end stays at the end, everywhere.
    b.coordinator.insert("date", into: key)
    b.settle()
    harness.round()
    for device in [a, b, c] { #expect(device.coordinator[key] == written + ["date"], "\(device.name)") }
  }

  @Test(arguments: [favorites, tags])
  func concurrentAdditionsFollowInTheSameOrderOnEveryDevice(key: SyncKey<[String]>) {
    let harness = Harness()
    let devices = ["A", "B", "C"].map { harness.device($0) }
    devices[0].coordinator[key] = ["one", "two"]
    devices[0].settle()
    harness.round()
    devices[1].coordinator[key] = ["one", "two", "b1", "b2"]
    devices[2].coordinator[key] = ["one", "two", "c2", "c1"]
    for device in devices { device.settle() }
    for _ in 0..<4 { harness.round() }
    let orders = devices.map { $0.coordinator[key] }
    #expect(Set(orders.map { $0.joined(separator: ",") }).count == 1, "\(orders)")
    let order = orders[0]
    #expect(Array(order.prefix(2)) == ["one", "two"])
    #expect(order.firstIndex(of: "b1") ?? 0 < order.firstIndex(of: "b2") ?? 0, "B's own order kept")
    #expect(order.firstIndex(of: "c2") ?? 0 < order.firstIndex(of: "c1") ?? 0, "C's own order kept")
  }
}

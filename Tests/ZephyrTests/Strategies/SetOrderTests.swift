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

  /// A reorder, with no element added or removed, is an edit: it replicates, and every
  /// device reads the writer's order (it was not synced: the state saw no change).
  @Test(arguments: [favorites, tags])
  func aReorderReplicates(key: SyncKey<[String]>) {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    a.coordinator[key] = ["a", "b", "c"]
    a.settle()
    harness.round()
    #expect(b.coordinator[key] == ["a", "b", "c"])
    a.coordinator[key] = ["c", "a", "b"]
    a.settle()
    harness.round()
    for device in [a, b] { #expect(device.coordinator[key] == ["c", "a", "b"], "\(device.name)") }

    // B moves one back; A reads it too.
    b.coordinator[key] = ["a", "c", "b"]
    b.settle()
    harness.round()
    for device in [a, b] { #expect(device.coordinator[key] == ["a", "c", "b"], "\(device.name)") }
  }

  /// An element inserted in the middle stays where its writer put it (it went to the end).
  @Test(arguments: [favorites, tags])
  func aMiddleInsertKeepsItsPlace(key: SyncKey<[String]>) {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    a.coordinator[key] = ["a", "b", "c"]
    a.settle()
    harness.round()
    b.coordinator[key] = ["a", "x", "b", "c"]
    b.settle()
    harness.round()
    for device in [a, b] { #expect(device.coordinator[key] == ["a", "x", "b", "c"], "\(device.name)") }
    // Then a removal and an append elsewhere keep it there.
    a.coordinator[key] = ["a", "x", "c", "d"]
    a.settle()
    harness.round()
    for device in [a, b] { #expect(device.coordinator[key] == ["a", "x", "c", "d"], "\(device.name)") }
  }

  /// Concurrent reorders: every device computes the same order, the latest write's
  /// (by generation, then writer), with the other's additions after it.
  @Test(arguments: [favorites, tags])
  func concurrentReordersAgree(key: SyncKey<[String]>) {
    let harness = Harness()
    let devices = ["A", "B", "C"].map { harness.device($0) }
    devices[0].coordinator[key] = ["a", "b", "c"]
    devices[0].settle()
    harness.round()
    devices[1].coordinator[key] = ["c", "b", "a", "y"]
    devices[2].coordinator[key] = ["b", "x", "a", "c"]
    for device in devices { device.settle() }
    for _ in 0..<4 { harness.round() }
    let orders = devices.map { $0.coordinator[key] }
    #expect(Set(orders.map { $0.joined(separator: ",") }).count == 1, "\(orders)")
    #expect(Set(orders[0]) == ["a", "b", "c", "x", "y"])
    let b = ["c", "b", "a", "y"].filter(orders[0].contains)
    let c = ["b", "x", "a", "c"].filter(orders[0].contains)
    #expect(Array(orders[0].prefix(4)) == b || Array(orders[0].prefix(4)) == c, "\(orders[0])")
  }
}

/// The order's field in a record: read back with or without a deletion date and the
/// writer's time after it.
struct SetOrderRecordTests {
  @Test func aRecordWithAnOrderReadsBackWithADateAndTheWritersTime() throws {
    let dot = Stamp(generation: 2, origin: "a")
    let reordered = ReplicaState(kind: .set)
      .edited(to: .array(["a", "b", "c"].map { .string($0) }), dot: Stamp(generation: 1, origin: "a"))
      .edited(to: .array(["c", "a", "b"].map { .string($0) }), dot: dot)
    #expect(reordered.value(strategy: .set, key: "k") == .array(["c", "a", "b"].map { .string($0) }))
    let deleted = reordered.edited(to: nil, dot: Stamp(generation: 3, origin: "a"))
    for record in [
      ReplicaRecord(stamp: dot, state: reordered),
      ReplicaRecord(stamp: dot, state: deleted, deleted: Date(timeIntervalSinceReferenceDate: 786_000_000)),
    ] {
      for stored in [record.encoded, SentTime.appending(Date(timeIntervalSinceReferenceDate: 1), to: record.encoded)] {
        guard case .replica(let read) = RemoteState(storeValue: stored) else {
          Issue.record("\(stored.logDescription) does not read as a record")
          continue
        }
        #expect(read == record)
      }
    }
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// `.set(capacity:)` keeps the newest N elements, by write: every device trims the same
/// state alike, an element added after seeing another is never trimmed before it, and a
/// trimmed element does not come back from a device that still held it.
struct SetCapacityTests {
  private static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set(capacity: 5))
  private static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set(capacity: 3))

  private func ids(_ device: TestDevice) -> Set<UInt32> { Set(device.coordinator[Self.read]) }

  @Test func aSetOverItsCapacityKeepsTheNewestWrites() {
    let harness = Harness()
    let a = harness.device("A")
    a.coordinator.insert(contentsOf: [1, 2, 3], into: Self.read)
    a.settle()
    a.coordinator.insert(contentsOf: [4, 5], into: Self.read)
    a.settle()
    a.coordinator.insert(contentsOf: [6, 7], into: Self.read)
    a.settle()
    // The oldest write's ids go first; within one write, a fixed order decides (the smallest id first).
    #expect(ids(a) == [3, 4, 5, 6, 7])
    harness.round()
    let b = harness.device("B")
    harness.round()
    #expect(ids(b) == [3, 4, 5, 6, 7])
  }

  @Test func aTrimmedElementDoesNotComeBackFromADeviceThatStillHeldIt() {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    a.coordinator.insert(contentsOf: [1, 2, 3], into: Self.read)
    a.settle()
    harness.round()
    #expect(ids(b) == [1, 2, 3])
    // B, offline, keeps 1, 2, 3; A trims them away with newer marks.
    a.coordinator.insert(contentsOf: [10, 11, 12, 13, 14], into: Self.read)
    a.settle()
    #expect(ids(a) == [10, 11, 12, 13, 14])
    // B marks one more while offline, having seen 1, 2, 3: its mark is newer than theirs.
    b.coordinator.insert(20, into: Self.read)
    b.settle()
    for _ in 0..<3 { harness.round() }
    #expect(ids(a) == ids(b))
    #expect(ids(a).isDisjoint(with: [1, 2, 3]), "a trimmed id came back")
    #expect(ids(a).count == 5)
  }

  @Test func aMarkMadeAfterSeeingOthersIsNotTrimmedBeforeThem() {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    a.coordinator.insert(contentsOf: [1, 2, 3], into: Self.read)
    a.settle()
    harness.round()
    b.coordinator.insert(contentsOf: [20, 21, 22], into: Self.read)
    b.settle()
    #expect(ids(b) == [2, 3, 20, 21, 22])
    harness.round()
    #expect(ids(a) == [2, 3, 20, 21, 22])
  }

  @Test func threeDevicesTrimAlikeWhateverTheOrderTheyMerge() {
    let harness = Harness()
    let devices = ["A", "B", "C"].map { harness.device($0) }
    devices[0].coordinator.insert(contentsOf: [1, 2], into: Self.read)
    devices[0].settle()
    harness.round()
    for (offset, device) in devices.enumerated() {
      let base = UInt32(100 * (offset + 1))
      device.coordinator.insert(contentsOf: [base, base + 1, base + 2], into: Self.read)
      device.settle()
    }
    harness.cloud.upload(from: "C")
    harness.cloud.download(to: "B")
    devices[1].settle()
    for _ in 0..<4 { harness.round() }
    let agreed = ids(devices[0])
    for device in devices { #expect(ids(device) == agreed, "\(device.name)") }
    #expect(agreed.count == 5)
    #expect(agreed.isDisjoint(with: [1, 2]), "the first write, seen by every later one, is trimmed first")
  }

  @Test func anArrayKeyKeepsItsNewestElementsToo() {
    let harness = Harness()
    let a = harness.device("A")
    a.coordinator[Self.favorites] = ["a"]
    a.settle()
    a.coordinator.insert("b", into: Self.favorites)
    a.settle()
    a.coordinator.insert("c", into: Self.favorites)
    a.settle()
    a.coordinator.insert("d", into: Self.favorites)
    a.settle()
    #expect(Set(a.coordinator[Self.favorites]) == ["b", "c", "d"])
  }

  @Test func theStringKeyedFormTrimsLikeTheTypedOne() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["tags"]) { configuration in
      configuration.mergeStrategies["tags"] = .set
      configuration.setCapacities["tags"] = 2
    }
    a.set(.array([.string("x")]), "tags")
    a.set(.array([.string("x"), .string("y")]), "tags")
    a.set(.array([.string("x"), .string("y"), .string("z")]), "tags")
    #expect(a.value("tags").flatMap(\.arrayItems).map(Set.init) == [.string("y"), .string("z")])
  }
}

/// `Set<String>` is a set key like `[String]`: stored as an array, merged by `.set`, edited
/// element by element.
struct SetOfStringsTests {
  private static let tags = SyncKey<Set<String>>("tags", default: [], merge: .set)

  @Test func aSetOfStringsMergesAndTakesElementEdits() {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    a.coordinator.insert(contentsOf: ["swift", "ios"], into: Self.tags)
    a.settle()
    harness.round()
    #expect(b.coordinator[Self.tags] == ["swift", "ios"])
    a.coordinator.insert("linux", into: Self.tags)
    a.settle()
    b.coordinator.remove("ios", from: Self.tags)
    b.settle()
    for _ in 0..<2 { harness.round() }
    #expect(a.coordinator[Self.tags] == ["swift", "linux"])
    #expect(b.coordinator[Self.tags] == ["swift", "linux"])
    #expect(a.value("tags")?.arrayItems?.count == 2, "stored as an array")
  }
}

extension SetCapacityTests {
  /// A history trimmed on one device, then marks made one at a time on every device:
  /// each trim takes the oldest write's ids, on every device alike.
  @Test(arguments: World.allCases)
  func marksMadeOnEveryDeviceTrimTheOldestWriteOnly(world: World) {
    let key = SyncKey<PackedSet<UInt32>>("history", default: [], merge: .set(capacity: 50))
    let harness = Harness(world: world)
    let devices = ["A", "B", "C"].map { harness.device($0) }
    for batch in 0..<10 {
      devices[0].coordinator.insert(contentsOf: (0..<10).map { UInt32(batch * 100 + $0) }, into: key)
      devices[0].settle()
    }
    for _ in 0..<2 { harness.round() }
    for device in devices {
      #expect(Set(device.coordinator[key]) == Set((5..<10).flatMap { b in (0..<10).map { UInt32(b * 100 + $0) } }))
    }
    for (index, device) in devices.enumerated() {
      for mark in 0..<2 { device.coordinator.insert(UInt32(10_000 + index * 10 + mark), into: key) }
      device.settle()
    }
    devices[0].coordinator.remove(contentsOf: [1, 2, 3], from: key)  // trimmed already
    devices[0].settle()
    for _ in 0..<3 { harness.round() }
    let agreed = Set(devices[0].coordinator[key])
    for device in devices { #expect(Set(device.coordinator[key]) == agreed, "\(device.name)") }
    let trimmedFromBatch5 = Set((0..<10).map { UInt32(500 + $0) }).subtracting(agreed)
    #expect(trimmedFromBatch5.count == 6, "the six new marks trim six ids of the oldest write: \(agreed.sorted())")
    #expect(Set((6..<10).flatMap { b in (0..<10).map { UInt32(b * 100 + $0) } }).isSubset(of: agreed))
  }
}

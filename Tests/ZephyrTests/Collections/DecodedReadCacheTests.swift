import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A typed read of a large stored blob (a ``PackedSet`` of 25,000 ids) decodes it once,
/// not on every read: `coordinator[Keys.read].contains(id)` costs a lookup.
struct DecodedReadCacheTests {
  /// A blob that counts how often it is decoded.
  struct CountedBlob: SyncValue, Equatable {
    static let decodes = Locked(0)
    var bytes: Data

    init(bytes: Data) { self.bytes = bytes }

    init?(propertyList: PropertyListValue) {
      guard case .data(let bytes) = propertyList else { return nil }
      Self.decodes.withLock { $0 += 1 }
      self.bytes = bytes
    }

    var propertyList: PropertyListValue? { .data(bytes) }
  }

  private static let blob = SyncKey<CountedBlob>("blob", default: CountedBlob(bytes: Data()))

  @Test func aLargeBlobIsDecodedOnceUntilItChanges() {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    let big = CountedBlob(bytes: Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
    a.coordinator[Self.blob] = big
    a.settle()
    let before = CountedBlob.decodes.withLock { $0 }
    for _ in 0..<10 { #expect(a.coordinator[Self.blob] == big) }
    #expect(CountedBlob.decodes.withLock { $0 } - before <= 1, "ten reads of an unchanged blob decode it once")

    // Another device's change is read, not the cached value.
    harness.round()
    var changed = big
    changed.bytes[0] ^= 0xFF
    b.coordinator[Self.blob] = changed
    b.settle()
    harness.round()
    #expect(a.coordinator[Self.blob] == changed)
    // And an edit made behind Zephyr's back through UserDefaults.
    var local = big
    local.bytes[1] ^= 0xFF
    a.defaults.set(local.bytes, forKey: "blob")
    #expect(a.coordinator[Self.blob] == local)
  }

  @Test func aReadOfAPackedSetAfterAnInsertSeesTheInsert() {
    let harness = Harness()
    let a = harness.device("A")
    let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)
    a.coordinator.insert(contentsOf: (0..<2_000).map { UInt32($0) * 7 }, into: read)
    #expect(a.coordinator[read].contains(7))
    a.coordinator.insert(3, into: read)
    #expect(a.coordinator[read].contains(3))
    a.coordinator.remove(7, from: read)
    #expect(!a.coordinator[read].contains(7))
  }

  /// An element edit keeps the packed set it wrote as decoded, so that the next edit or
  /// read of the key decodes nothing; an undecodable blob is never kept.
  @Test func anElementEditKeepsTheSetItWroteDecoded() throws {
    let harness = Harness()
    let a = harness.device("A")
    let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)
    for round in UInt32(0)..<3 {
      a.coordinator.insert(contentsOf: (0..<4_000).map { $0 * 7 + round }, into: read)
      let kept = a.coordinator.engine.decodedReads.withLock { $0["read"] }
      #expect(kept?.blob == a.defaults.data(forKey: "read"), "round \(round): the blob written is kept")
      #expect((kept?.value as? PackedSet<UInt32>)?.count == 4_000 * Int(round + 1))
    }
    let junk = Data([PackedIntegers.formatByte]) + Data(repeating: 0xFF, count: 2_000)
    a.defaults.set(junk, forKey: "read")
    #expect(a.coordinator[read].isEmpty)
    #expect(a.coordinator.engine.decodedReads.withLock { $0["read"] }?.blob != junk)
  }
}

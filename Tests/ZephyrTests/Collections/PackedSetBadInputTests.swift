import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Bad input under a packed-set key gets a clear refusal in `status`, and the local value
/// is never touched: a blob of the wrong length (locally, or inside the store's record),
/// and element edits of a local value that is not a packed set.
struct PackedSetBadInputTests {
  private static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)

  @Test func aLocalBlobOfTheWrongLengthIsRefusedByNameAndKept() {
    let harness = Harness()
    let a = harness.device("A")
    _ = a.coordinator[Self.read]  // the key's first use declares its strategy
    a.settle()
    let handPacked = Data([0, 0, 0, 1, 0, 0, 0, 2, 0, 0])  // 4-byte ids, then two stray bytes
    a.defaults.set(handPacked, forKey: "read")
    a.settle()
    a.coordinator.sync(keys: ["read"])
    #expect(a.coordinator.status.refusedKeys["read"] == .strategyCannotMerge(strategy: "packed", value: "data"))
    #expect(a.defaults.data(forKey: "read") == handPacked)
    #expect(harness.cloud.serverValues["read"] == nil)
  }

  @Test func anElementEditOfAValueThatIsNoPackedSetIsRefusedAndTheValueKept() {
    let harness = Harness()
    let a = harness.device("A")
    let handPacked = Data([0, 0, 0, 1, 0, 0, 0, 2])
    a.defaults.set(handPacked, forKey: "read")
    a.coordinator.insert(3, into: Self.read)
    a.coordinator.remove(1, from: Self.read)
    a.settle()
    #expect(a.defaults.data(forKey: "read") == handPacked, "the element edit replaced a value it could not read")
    // (The reconcile of the key's first use refused it first, by the same cause.)
    let refusal = a.coordinator.status.refusedKeys["read"]
    #expect(
      refusal == .undecodableLocalValue("PackedSet<UInt32>")
        || refusal == .strategyCannotMerge(strategy: "packed", value: "data"))
    #expect(a.warnings.contains { $0.contains("refused element edit of read") && $0.contains("PackedSet<UInt32>") })
    // A whole-value set is the app's choice, and replaces it.
    a.coordinator[Self.read] = [3]
    a.settle()
    #expect(a.coordinator[Self.read] == [3])
    #expect(a.coordinator.status.refusedKeys["read"] == nil)
  }

  @Test func aRecordWhosePackedIdsAreCutShortIsRefusedAndTheLocalValueKept() throws {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: ["read"])
    a.coordinator.insert(contentsOf: [10, 20, 30], into: Self.read)
    a.settle()
    harness.round()
    #expect(Set(b.coordinator[Self.read]) == [10, 20, 30])
    // Cut the last byte off every packed blob in the record.
    func cut(_ value: PropertyListValue) -> PropertyListValue {
      switch value {
      case .data(let bytes) where bytes.first == PackedIntegers.formatByte: .data(bytes.dropLast())
      case .array(let items): .array(items.map(cut))
      default: value
      }
    }
    let record = try #require(harness.cloud.serverValues["read"])
    harness.cloud.setServerValue(cut(record), forKey: "read")
    harness.cloud.download(to: "B")
    b.settle()
    // Refused by name in the log; treated as absent, so B's own state replaces it (and
    // the refusal ends with that push).
    #expect(b.warnings.contains { $0.contains("read") && $0.contains("malformed record") })
    guard case .replica(let repaired) = RemoteState(storeValue: b.store.value(forKey: "read")) else {
      Issue.record("B did not replace the broken record")
      return
    }
    #expect(repaired.state.value(strategy: .set, key: "read")?.packedIds == [10, 20, 30])
    #expect(Set(b.coordinator[Self.read]) == [10, 20, 30])
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The record of a packed set stays near its ids' size however many writes built it: a
/// history marked a few ids at a time on three devices is 1,000 writes.
struct PackedRecordSizeTests {
  /// 25,000 random 32-bit ids, added 25 per write by three devices in turn, each write
  /// made after seeing the ones before it.
  private static func history(writes: Int, idsPerWrite: Int) -> ReplicaState {
    var random = SeededGenerator(seed: 2_026)
    var groups: [Stamp: [PropertyListValue]] = [:]
    var held = Set<UInt64>()
    var context = VersionVector()
    for write in 0..<writes {
      var batch: [UInt64] = []
      while batch.count < idsPerWrite {
        let id = UInt64(UInt32.random(in: 0...UInt32.max, using: &random))
        if held.insert(id).inserted { batch.append(id) }
      }
      let dot = Stamp(generation: UInt64(write + 1), origin: "device\(write % 3).x\(write % 3)")
      groups[dot] = batch.sorted().map { .unsignedInteger($0) }
      context.include(dot)
    }
    return ReplicaState(kind: .packedSet, groups: groups, context: context)
  }

  @Test func aHistoryOfAThousandSmallWritesFitsWithinTheGoal() {
    let state = Self.history(writes: 1_000, idsPerWrite: 25)
    #expect(state.partCount == 25_000)
    let record = ReplicaRecord(stamp: Stamp(generation: 1_001, origin: "device0"), state: state).encoded
    let bytes = SimulatedCloud.binaryPlistSize(of: record)
    print("PackedRecordSizeTests: 25,000 ids in 1,000 writes, record \(bytes) bytes")
    #expect(bytes <= 110_000, "record \(bytes) bytes")
    guard case .replica(let read) = RemoteState(storeValue: record) else {
      Issue.record("the record does not read back")
      return
    }
    #expect(read.state == state)
  }

  @Test func anIdHeldByTwoWritesRoundTrips() {
    var state = ReplicaState(kind: .packedSet)
    state = state.edited(to: .data(PackedIntegers.encode([1, 5, 9])), dot: Stamp(generation: 1, origin: "a"))
    let other = ReplicaState(kind: .packedSet).edited(
      to: .data(PackedIntegers.encode([5, 7])), dot: Stamp(generation: 1, origin: "b"))
    let joined = state.joined(with: other)
    #expect(joined.partCount == 5, "5 is held by both writes")
    let record = ReplicaRecord(stamp: Stamp(generation: 2, origin: "a"), state: joined).encoded
    guard case .replica(let read) = RemoteState(storeValue: record) else {
      Issue.record("the record does not read back")
      return
    }
    #expect(read.state == joined)
  }

  @Test(arguments: [
    ("an index past the last write", 0),
    ("an extra write out of order", 1),
    ("ids of another length", 2),
  ])
  func aDamagedMembershipIsMalformed(_ damage: (String, Int)) {
    var state = ReplicaState(kind: .packedSet)
    state = state.edited(to: .data(PackedIntegers.encode([1, 5, 9])), dot: Stamp(generation: 1, origin: "a"))
    state = state.edited(to: .data(PackedIntegers.encode([1, 5, 9, 12])), dot: Stamp(generation: 2, origin: "a"))
    guard case .array(var fields) = ReplicaRecord(stamp: Stamp(generation: 2, origin: "a"), state: state).encoded
    else { return }
    switch damage.1 {
    case 0: fields[8] = .data(Data([0xFF]))
    case 1: fields[9] = .data(Varint.encode([3, 0, 1, 1]))
    default: fields[7] = .data(PackedIntegers.encode([1, 5]))
    }
    guard case .malformed = RemoteState(storeValue: .array(fields)) else {
      Issue.record("\(damage.0) was read")
      return
    }
  }
}

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

  /// A write costs a few bytes beyond its ids' index bits: 25,000 ids marked five at a
  /// time (5,000 writes) fit within the goal too.
  @Test func aWriteCostsAFewBytes() {
    let state = Self.history(writes: 5_000, idsPerWrite: 5)
    let record = ReplicaRecord(stamp: Stamp(generation: 5_001, origin: "device0"), state: state).encoded
    let bytes = SimulatedCloud.binaryPlistSize(of: record)
    let oneWrite = SimulatedCloud.binaryPlistSize(
      of: ReplicaRecord(
        stamp: Stamp(generation: 1, origin: "device0"), state: Self.history(writes: 1, idsPerWrite: 25_000)
      )
      .encoded)
    // Each id names its write in 13 bits; each write costs what remains.
    let perWrite = Double(bytes - oneWrite - 25_000 * 13 / 8) / 5_000
    print("PackedRecordSizeTests: 25,000 ids in 5,000 writes, record \(bytes) bytes, \(perWrite) bytes a write")
    #expect(perWrite <= 4, "\(perWrite) bytes a write")
    #expect(bytes <= 110_000, "record \(bytes) bytes")
    guard case .replica(let read) = RemoteState(storeValue: record) else {
      Issue.record("the record does not read back")
      return
    }
    #expect(read.state == state ? true : false)
  }

  @Test(arguments: [
    ("an index past the last write", 0),
    ("an extra write out of order", 1),
    ("ids of another length", 2),
    ("writes cut inside a number", 3),
    ("a writer without its generation", 4),
    ("a write before the first generation", 5),
    ("a generation past the maximum", 6),
    ("a writer it does not name", 7),
    ("the writes as a list", 8),
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
    case 2: fields[7] = .data(PackedIntegers.encode([1, 5]))
    case 3: fields[6] = .data(Data([0x00, 0x81]))
    case 4: fields[6] = .data(Varint.encode([0, 1, 0]))
    case 5: fields[6] = .data(Varint.encode([0, 0, 0, 2]))
    case 6: fields[6] = .data(Varint.encode([0, 1, 0, Generation.maximum]))
    case 7: fields[6] = .data(Varint.encode([0, 1, 1, 1]))
    default: fields[6] = .array([.array([.integer(0), .integer(1)]), .array([.integer(0), .integer(2)])])
    }
    guard case .malformed = RemoteState(storeValue: .array(fields)) else {
      Issue.record("\(damage.0) was read")
      return
    }
  }
}

import Foundation
import Testing

@testable import Zephyr

/// The merge rules (the table of Sources/Zephyr/Zephyr.docc/MergeSemantics.md), one row
/// per case, against the pure reconciler.
struct ReconcilerTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var local: PropertyListValue?
    var remote: RemoteState
    var ledger: LedgerEntry?
    var policy: MismatchPolicy = .preferLocal
    var expected: SyncAction

    var testDescription: String { name }
  }

  static let old = PropertyListValue.string("old")
  static let new = PropertyListValue.string("new")
  static let other = PropertyListValue.string("other")
  static let deletedAt = Date(timeIntervalSince1970: 1_000)

  static func record(_ generation: UInt64, _ value: PropertyListValue?, origin: String = "x") -> RemoteState {
    .record(
      SyncRecord(generation: generation, origin: origin, content: value.map { .value($0) } ?? .deleted(deletedAt)))
  }

  static func agreed(_ generation: UInt64, _ value: PropertyListValue?, origin: String = "x") -> LedgerEntry {
    LedgerEntry(generation: generation, agreed: value.map { .value($0.fingerprint) } ?? .deleted, origin: origin)
  }

  static func stamp(_ generation: UInt64, _ origin: String = "x") -> Stamp {
    Stamp(generation: generation, origin: origin)
  }

  /// Of two values written under one stamp, the one with the higher fingerprint wins.
  static let (tieLoser, tieWinner) =
    old.fingerprint.rawValue < other.fingerprint.rawValue ? (old, other) : (other, old)

  static let rows: [Row] = [
    Row(
      name: "unchanged | unchanged: nothing", local: old, remote: record(3, old), ledger: agreed(3, old),
      expected: .none),
    Row(
      name: "unchanged deleted | unchanged tombstone: nothing", local: nil, remote: record(3, nil),
      ledger: agreed(3, nil), expected: .none),
    Row(
      name: "changed | unchanged: push at ledger + 1", local: new, remote: record(3, old), ledger: agreed(3, old),
      expected: .push(generation: 4, value: new, reason: .localEdit)),
    Row(
      name: "changed | absent: push at ledger + 1", local: new, remote: .absent, ledger: agreed(3, old),
      expected: .push(generation: 4, value: new, reason: .localEdit)),
    Row(
      name: "deleted locally | unchanged: push a tombstone", local: nil, remote: record(3, old),
      ledger: agreed(3, old), expected: .push(generation: 4, value: nil, reason: .localEdit)),
    Row(
      name: "unchanged | changed: pull, ledger takes the remote stamp", local: old, remote: record(5, new),
      ledger: agreed(3, old), expected: .pull(stamp: stamp(5), content: .value(new), reason: .remoteNewer)),
    Row(
      name: "unchanged | tombstone: pull the delete", local: old, remote: record(4, nil), ledger: agreed(3, old),
      expected: .pull(stamp: stamp(4), content: .deleted(deletedAt), reason: .remoteNewer)),
    Row(
      name: "unchanged | same generation, later device: pull", local: old, remote: record(3, other, origin: "y"),
      ledger: agreed(3, old), expected: .pull(stamp: stamp(3, "y"), content: .value(other), reason: .remoteDiffers)),
    Row(
      name: "unchanged | same generation, earlier device: publish ours again", local: old,
      remote: record(3, other, origin: "a"), ledger: agreed(3, old),
      expected: .republish(stamp: stamp(3), value: old, reason: .storeLostWrite)),
    Row(
      name: "one stamp, two values (a crash): the higher fingerprint wins", local: tieLoser,
      remote: record(3, tieWinner), ledger: agreed(3, tieLoser),
      expected: .pull(stamp: stamp(3), content: .value(tieWinner), reason: .remoteDiffers)),
    Row(
      name: "one stamp, two values (a crash): the lower fingerprint is replaced", local: tieWinner,
      remote: record(3, tieLoser), ledger: agreed(3, tieWinner),
      expected: .republish(stamp: stamp(3), value: tieWinner, reason: .storeLostWrite)),
    Row(
      name: "unchanged, present | absent: push again", local: old, remote: .absent, ledger: agreed(3, old),
      expected: .republish(stamp: stamp(3), value: old, reason: .absentFromStore)),
    Row(
      name: "unchanged, deleted | absent: nothing (a collected tombstone)", local: nil, remote: .absent,
      ledger: agreed(3, nil), expected: .none),
    Row(
      name: "unchanged | generation below the ledger's: push again", local: old, remote: record(2, other),
      ledger: agreed(3, old), expected: .republish(stamp: stamp(3), value: old, reason: .storeLostWrite)),
    Row(
      name: "changed | generation below the ledger's: push at ledger + 1", local: new, remote: record(2, other),
      ledger: agreed(3, old), expected: .push(generation: 4, value: new, reason: .localEdit)),
    Row(
      name: "unchanged | the agreed value under a later stamp: adopt it, no write", local: old,
      remote: record(5, old, origin: "y"), ledger: agreed(3, old), expected: .adopt(stamp: stamp(5, "y"))),
    Row(
      name: "changed | the agreed value under a later stamp: push above it", local: new,
      remote: record(5, old, origin: "y"), ledger: agreed(3, old),
      expected: .push(generation: 6, value: new, reason: .localEdit)),
    Row(
      name: "changed | changed, equal value: adopt the remote stamp", local: new, remote: record(5, new),
      ledger: agreed(3, old), expected: .adopt(stamp: stamp(5))),
    Row(
      name: "both deleted: adopt the tombstone", local: nil, remote: record(5, nil), ledger: agreed(3, old),
      expected: .adopt(stamp: stamp(5))),
    Row(
      name: "no history, present | record: pull (cloud history wins)", local: new, remote: record(2, old),
      ledger: nil, expected: .pull(stamp: stamp(2), content: .value(old), reason: .cloudHistory)),
    Row(
      name: "no history, present | same value: adopt", local: old, remote: record(2, old), ledger: nil,
      expected: .adopt(stamp: stamp(2))),
    Row(
      name: "no history, absent | record: pull", local: nil, remote: record(2, old), ledger: nil,
      expected: .pull(stamp: stamp(2), content: .value(old), reason: .remoteNewer)),
    Row(
      name: "no history, present | absent: first upload at g1", local: new, remote: .absent, ledger: nil,
      expected: .push(generation: 1, value: new, reason: .firstUpload)),
    Row(name: "no history, absent | absent: nothing", local: nil, remote: .absent, ledger: nil, expected: .none),
    Row(
      name: "conflict, sync(): local wins at remote + 1", local: new, remote: record(5, other),
      ledger: agreed(3, old), policy: .preferLocal,
      expected: .push(generation: 6, value: new, reason: .conflictLocalWins)),
    Row(
      name: "conflict, inbound event: remote wins", local: new, remote: record(5, other), ledger: agreed(3, old),
      policy: .preferRemote, expected: .pull(stamp: stamp(5), content: .value(other), reason: .conflictRemoteWins)),
    Row(
      name: "conflict, local delete vs remote edit, sync(): tombstone wins", local: nil, remote: record(5, other),
      ledger: agreed(3, old), expected: .push(generation: 6, value: nil, reason: .conflictLocalWins)),
    Row(
      name: "foreign value with history: pulled as ledger + 1", local: old, remote: .foreign(other),
      ledger: agreed(3, old), expected: .pull(stamp: stamp(4, ""), content: .value(other), reason: .foreignWrite)),
    Row(
      name: "foreign value equal to the agreed one: nothing", local: old, remote: .foreign(old),
      ledger: agreed(3, old), expected: .none),
    Row(
      name: "foreign value, no history, no local value: pull at g1", local: nil, remote: .foreign(other),
      ledger: nil, expected: .pull(stamp: stamp(1, ""), content: .value(other), reason: .remoteNewer)),
    Row(
      name: "foreign value vs never-synced local value, sync(): local wins", local: new, remote: .foreign(other),
      ledger: nil,
      expected: .push(generation: 2, value: new, reason: .conflictLocalWins, over: [ForeignName(of: other)])),
    Row(
      name: "malformed record: treated as absent", local: old, remote: .malformed(reason: "bad"),
      ledger: agreed(3, old), expected: .republish(stamp: stamp(3), value: old, reason: .absentFromStore)),
    Row(
      name: "newer record format: left alone", local: new, remote: .unsupported(version: "z2"),
      ledger: agreed(3, old), expected: .skip(reason: "store holds record format z2, newer than this Zephyr")),
    Row(
      name: "generation at the maximum does not overflow", local: new, remote: record(Generation.maximum, old),
      ledger: agreed(Generation.maximum, old),
      expected: .push(generation: Generation.maximum, value: new, reason: .localEdit)),
  ]

  @Test(arguments: rows)
  func mergeRule(_ row: Row) {
    let action = Reconciler.decide(
      key: "k", local: row.local, remote: row.remote, ledger: row.ledger, policy: row.policy)
    #expect(action == row.expected)
  }

  @Test func resolverDecidesConflictsWithBothSides() {
    let seen = Locked<[Conflict]>([])
    let resolver: ConflictResolver = { conflict in
      seen.withLock { $0.append(conflict) }
      return .merged(.string("merged"))
    }
    let action = Reconciler.decide(
      key: "k", local: Self.new, remote: Self.record(5, Self.other), ledger: Self.agreed(3, Self.old),
      policy: .preferRemote, resolver: resolver)
    #expect(action == .push(generation: 6, value: .string("merged"), reason: .resolverMerged))
    #expect(seen.withLock { $0 } == [Conflict(key: "k", local: Self.new, remote: Self.other)])
  }

  @Test(arguments: [MismatchPolicy.preferLocal, .preferRemote])
  func resolverCanFallBackToThePolicy(_ policy: MismatchPolicy) {
    let action = Reconciler.decide(
      key: "k", local: Self.new, remote: Self.record(5, Self.other), ledger: Self.agreed(3, Self.old),
      policy: policy, resolver: { _ in .usePolicy })
    let expected = Reconciler.decide(
      key: "k", local: Self.new, remote: Self.record(5, Self.other), ledger: Self.agreed(3, Self.old), policy: policy)
    #expect(action == expected)
    #expect(action != .none)
  }

  @Test func resolverIsNotAskedWithoutAConflict() {
    let resolver: ConflictResolver = { _ in
      Issue.record("resolver called")
      return .keepLocal
    }
    let action = Reconciler.decide(
      key: "k", local: Self.old, remote: Self.record(5, Self.other), ledger: Self.agreed(3, Self.old),
      policy: .preferLocal, resolver: resolver)
    #expect(action == .pull(stamp: Self.stamp(5), content: .value(Self.other), reason: .remoteNewer))
  }
}

extension Reconciler {
  /// The last-writer-wins rules for a store value already classified, with no ledger
  /// regained and a clock of 0: how these tests ask the table.
  fileprivate static func decide(
    key: String, local: PropertyListValue?, remote: RemoteState, ledger: LedgerEntry?, policy: MismatchPolicy,
    resolver: ConflictResolver? = nil
  ) -> SyncAction {
    let context = Context(policy: policy, resolver: resolver)
    return decide(Facts(key: key, local: local, remote: remote, ledger: ledger, context: context), context)
  }
}

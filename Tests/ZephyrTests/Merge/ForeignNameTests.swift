import Foundation
import Testing

@testable import Zephyr

/// An agreed foreign value (a store value that is no Zephyr record, which this device
/// took) against the Zephyr records that reach the store after it: a record replaces it
/// only when it names it (it was made over it) or is stamped above where this device read
/// it.
struct ForeignNameTests {
  static let foreign = PropertyListValue.string("foreign")
  static let stale = PropertyListValue.string("stale")
  static let edit = PropertyListValue.string("edit")

  /// The foreign value as a device agreed on it: read at `generation`, with no origin.
  static func agreedForeign(at generation: UInt64) -> LedgerEntry {
    LedgerEntry(generation: generation, agreed: .value(foreign.fingerprint), origin: "")
  }

  static func decide(local: PropertyListValue?, store: PropertyListValue?, ledger: LedgerEntry?) -> SyncAction {
    let input = Reconciler.Input(key: "theme", local: local, storeValue: store, ledger: ledger)
    return Reconciler.decide(input, Reconciler.Context(policy: .preferRemote, clock: 4, deviceID: "A")).action
  }

  @Test func aStaleRecordDoesNotReplaceAnAgreedForeignValue() {
    // Read at g4 (the device's history was g3); a record at g1 made before the foreign
    // write, which names nothing, reaches the store after it.
    let staleRecord = SyncRecord(generation: 1, origin: "C", content: .value(Self.stale)).encoded
    let action = Self.decide(local: Self.foreign, store: staleRecord, ledger: Self.agreedForeign(at: 4))
    // Published again naming itself: earlier than every state made over it.
    #expect(
      action
        == .republish(
          stamp: Stamp(generation: 4, origin: ""), value: Self.foreign, reason: .storeLostWrite,
          over: [ForeignName(of: Self.foreign)]))
  }

  @Test func aRecordStampedAboveTheReadReplacesIt() {
    let later = SyncRecord(generation: 5, origin: "C", content: .value(Self.edit)).encoded
    let action = Self.decide(local: Self.foreign, store: later, ledger: Self.agreedForeign(at: 4))
    #expect(action == .pull(stamp: Stamp(generation: 5, origin: "C"), content: .value(Self.edit), reason: .remoteNewer))
  }

  @Test func aRecordNamingTheAgreedForeignValueReplacesItWhateverItsStamp() {
    // Made over the foreign value on a device with less history: stamped below the read.
    let named = SyncRecord(
      generation: 2, origin: "C", content: .value(Self.edit), madeOver: [ForeignName(of: Self.foreign)])
    let action = Self.decide(local: Self.foreign, store: named.encoded, ledger: Self.agreedForeign(at: 4))
    #expect(
      action
        == .pull(
          stamp: Stamp(generation: 2, origin: "C"), content: .value(Self.edit), reason: .remoteNewer,
          over: [ForeignName(of: Self.foreign)]))
  }

  @Test func aRecordNamingAnotherForeignValueIsOrderedByItsStamp() {
    let other = ForeignName(of: .string("another foreign value"))
    let named = SyncRecord(generation: 2, origin: "C", content: .value(Self.edit), madeOver: [other])
    let action = Self.decide(local: Self.foreign, store: named.encoded, ledger: Self.agreedForeign(at: 4))
    // Published again naming itself: earlier than every state made over it.
    #expect(
      action
        == .republish(
          stamp: Stamp(generation: 4, origin: ""), value: Self.foreign, reason: .storeLostWrite,
          over: [ForeignName(of: Self.foreign)]))
  }

  @Test func aDeviceWithNoHistoryReadsTheForeignValueAtGenerationOne() {
    // It takes the foreign value at g1...
    let taken = Self.decide(local: nil, store: Self.foreign, ledger: nil)
    #expect(
      taken == .pull(stamp: Stamp(generation: 1, origin: ""), content: .value(Self.foreign), reason: .remoteNewer))
    // ...so any record of another device stamped g1 or above replaces it, named or not.
    let record = SyncRecord(generation: 1, origin: "C", content: .value(Self.stale)).encoded
    let action = Self.decide(local: Self.foreign, store: record, ledger: Self.agreedForeign(at: 1))
    #expect(
      action == .pull(stamp: Stamp(generation: 1, origin: "C"), content: .value(Self.stale), reason: .remoteDiffers))
  }

  @Test func aPushOverAnAgreedForeignValueNamesIt() {
    let action = Self.decide(local: Self.edit, store: Self.foreign, ledger: Self.agreedForeign(at: 4))
    #expect(action == .push(generation: 5, value: Self.edit, reason: .localEdit, over: [ForeignName(of: Self.foreign)]))
    // A push over a Zephyr record names nothing.
    let record = SyncRecord(generation: 4, origin: "C", content: .value(Self.stale))
    let plain = Self.decide(
      local: Self.edit, store: record.encoded,
      ledger: LedgerEntry(generation: 4, agreed: .value(Self.stale.fingerprint), origin: "C"))
    #expect(plain == .push(generation: 5, value: Self.edit, reason: .localEdit))
  }

  /// Seeds 2477 and 3346: a device that agreed on the foreign value at a generation of its
  /// own publishes it again, naming itself; a device whose state (a value or a delete)
  /// was made over it finds it earlier, whatever its stamp, and publishes its state again.
  @Test func theForeignValuePublishedAgainIsEarlierThanAStateMadeOverIt() {
    let name = ForeignName(of: Self.foreign)
    let republished = SyncRecord(generation: 9, origin: "B", content: .value(Self.foreign), madeOver: [name])
    #expect(republished.republishesForeignValue)
    for mine: PropertyListValue? in [Self.edit, nil] {
      var ledger = LedgerEntry(stamp: Stamp(generation: 2, origin: "A"), agreed: .init(mine), madeOver: [name])
      let action = Self.decide(local: mine, store: republished.encoded, ledger: ledger)
      #expect(
        action
          == .republish(stamp: Stamp(generation: 2, origin: "A"), value: mine, reason: .storeLostWrite, over: [name]))
      // A state that descends from no foreign value, or from another, orders it by stamp;
      // taken, it keeps naming what the state it replaced named.
      for names in [[], [ForeignName(of: .string("another"))]] {
        ledger.madeOver = names
        let pulled = Self.decide(local: mine, store: republished.encoded, ledger: ledger)
        #expect(
          pulled
            == .pull(
              stamp: republished.stamp, content: .value(Self.foreign), reason: .remoteNewer, over: [name] + names))
      }
    }
    // The same value written again by a device (not published again) names nothing, and
    // is ordered by its stamp.
    let ledger = LedgerEntry(stamp: Stamp(generation: 2, origin: "A"), agreed: .init(Self.edit), madeOver: [name])
    let rewrite = Self.decide(local: Self.foreign, store: nil, ledger: ledger)
    #expect(rewrite == .push(generation: 5, value: Self.foreign, reason: .localEdit, over: []))
  }

  /// Seed 3096: an edit names every foreign value its state descends from, newest first,
  /// at most four, so that a device that read an earlier one above the edit's stamp still
  /// takes the edit.
  @Test func anEditNamesTheForeignValuesItDescendsFrom() {
    let names = (0..<6).map { ForeignName(of: .string("foreign \($0)")) }
    let ledger = LedgerEntry(stamp: Stamp(generation: 3, origin: "C"), agreed: .init(Self.stale), madeOver: names)
    let action = Self.decide(local: Self.edit, store: nil, ledger: ledger)
    let expected = Array(names.prefix(ForeignName.maximumNamed))
    #expect(action == .push(generation: 5, value: Self.edit, reason: .localEdit, over: expected))
    // The store's foreign value comes first.
    let storeForeign = PropertyListValue.string("foreign 9")
    #expect(
      ForeignName.chain(ForeignName(of: storeForeign), names, writing: Self.edit).first == ForeignName(of: storeForeign)
    )
    #expect(
      ForeignName.chain(nil, names + names, writing: .string("foreign 1")) == [names[0], names[2], names[3], names[4]])
    // A device that agreed on the second of them at g7 takes a record naming it at g2.
    let record = SyncRecord(generation: 2, origin: "C", content: .value(Self.edit), madeOver: expected)
    let agreed = LedgerEntry(
      generation: 7, agreed: .value(PropertyListValue.string("foreign 0").fingerprint), origin: "")
    let taken = Self.decide(local: .string("foreign 0"), store: record.encoded, ledger: agreed)
    #expect(taken == .pull(stamp: record.stamp, content: .value(Self.edit), reason: .remoteNewer, over: expected))
  }

  // MARK: The record field

  @Test(arguments: [0, 1, 0xFFFF, 0x1_0000, UInt32.max] as [UInt32])
  func theFieldRoundTrips(_ raw: UInt32) {
    for content: SyncRecord.Content in [.value(Self.edit), .deleted(Date(timeIntervalSinceReferenceDate: 9))] {
      for count in 1...ForeignName.maximumNamed {
        let names = (0..<count).map { ForeignName(rawValue: raw &- UInt32($0)) }
        let record = SyncRecord(generation: 7, origin: "k3f9qa", content: content, madeOver: names)
        #expect(RemoteState(storeValue: record.encoded) == .record(record))
        // With the writer's time after it, too.
        let timed = SentTime.appending(Date(timeIntervalSinceReferenceDate: 1_000), to: record.encoded)
        #expect(RemoteState(storeValue: timed) == .record(record))
      }
    }
  }

  @Test func aRecordWithoutTheFieldReadsAsBefore() {
    let stored = PropertyListValue.array([.string("z1"), .integer(7), .string("k3f9qa"), Self.edit])
    #expect(
      RemoteState(storeValue: stored)
        == .record(SyncRecord(generation: 7, origin: "k3f9qa", content: .value(Self.edit))))
  }

  @Test(arguments: [
    PropertyListValue.integer(-1), .integer(1 << 32), .string("name"), .data(Data([1, 2])), .array([]),
    .array([.integer(1)]), .array([.integer(1), .integer(-1)]), .array((1...5).map { .integer($0) }),
  ])
  func aFieldThatIsNoNameIsMalformed(_ field: PropertyListValue) {
    let stored = PropertyListValue.array([.string("z1"), .integer(7), .string("k3f9qa"), Self.edit, field])
    guard case .malformed = RemoteState(storeValue: stored) else {
      Issue.record("read as \(RemoteState(storeValue: stored))")
      return
    }
  }

  @Test func aStoredRecordIsNamedPlainCompressedAndTimed() throws {
    let name = ForeignName(of: Self.foreign)
    let record = SyncRecord(generation: 3, origin: "B", content: .value(.string(String(repeating: "ab", count: 200))))
    let named = SyncRecord(generation: 3, origin: "B", content: record.content, madeOver: [name])
    #expect(SyncRecord.stored(record.encoded, madeOver: name) == named.encoded)
    let envelope = try #require(CompressedRecord.envelope(of: record.encoded))
    let timed = SentTime.appending(Date(timeIntervalSinceReferenceDate: 5), to: envelope)
    let renamed = try #require(SyncRecord.stored(timed, madeOver: name))
    #expect(RemoteState(storeValue: renamed) == .record(named))
    #expect(CompressedRecord.isEnvelope(renamed))
    #expect(SentTime.read(renamed) == Date(timeIntervalSinceReferenceDate: 5))
    // A foreign value, or a strategy key's record, is no last-writer-wins record.
    #expect(SyncRecord.stored(Self.foreign, madeOver: name) == nil)
  }

  /// A limit, documented in <doc:LimitsOfTheGuarantees>: a name is 32 bits of the
  /// fingerprint, so two foreign values whose fingerprints share them are one name, and a
  /// record made over the one replaces the other. (The two integers were found by a
  /// birthday search over a million random ones: their fingerprints differ, and their
  /// low 32 bits do not.)
  @Test func namesOfTwoValuesWhoseFingerprintsShareTheirLow32BitsCollide() {
    let first = PropertyListValue.integer(6_931_123_303_779_851_815)
    let second = PropertyListValue.integer(-7_393_989_634_546_291_492)
    #expect(first.fingerprint != second.fingerprint)
    #expect(ForeignName(of: first) == ForeignName(of: second))
    let named = SyncRecord(generation: 2, origin: "C", content: .value(Self.edit), madeOver: [ForeignName(of: first)])
    let ledger = LedgerEntry(generation: 4, agreed: .value(second.fingerprint), origin: "")
    let action = Self.decide(local: second, store: named.encoded, ledger: ledger)
    #expect(
      action
        == .pull(
          stamp: Stamp(generation: 2, origin: "C"), content: .value(Self.edit), reason: .remoteNewer,
          over: [ForeignName(of: first)]))
  }

  /// What the name costs, measured as a binary property list: 7 bytes for a name of 2^16
  /// or more (all but 1 in 65,536 of them: a 4-byte integer, its marker, its reference and
  /// its offset), fewer for smaller ones.
  @Test func theNameCostsAtMostSevenBytes() throws {
    func bytes(_ record: SyncRecord) throws -> Int {
      try PropertyListSerialization.data(fromPropertyList: record.encoded.foundationValue, format: .binary, options: 0)
        .count
    }
    let plain = SyncRecord(generation: 7, origin: "k3f9qa", content: .value(.string("dusk")))
    for raw in [0x1_0000, 0x8000_0000, UInt32.max] as [UInt32] {
      var named = plain
      named.madeOver = [ForeignName(rawValue: raw)]
      #expect(try bytes(named) - bytes(plain) == 7)
      #expect(named.encoded.estimatedBinaryPlistSize - plain.encoded.estimatedBinaryPlistSize == 7)
    }
    // Each further name (an edit that descends from several foreign values) costs 7 more,
    // and their array 3: 17 bytes for two, 31 for the most, four.
    for count in 2...ForeignName.maximumNamed {
      var named = plain
      named.madeOver = (0..<count).map { ForeignName(rawValue: 0x8000_0000 + UInt32($0)) }
      #expect(try bytes(named) - bytes(plain) == 3 + 7 * count, "\(count) names")
      #expect(named.encoded.estimatedBinaryPlistSize == (try bytes(named)), "\(count) names")
    }
  }
}

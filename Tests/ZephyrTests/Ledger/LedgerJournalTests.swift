import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A pull of a strategy key is saved twice: written ahead of its `UserDefaults` write
/// (the new state, and the state to fall back to), then settled. The journal appends the
/// new state once: the state to fall back to is the one the file already holds, and
/// settling names the key only. Whatever the file holds at each step reads back as the
/// ledger was then.
struct LedgerJournalTests {
  /// A packed set of `count` ids, as one write of `origin`.
  static func packedState(_ count: Int, origin: String, generation: UInt64, seed: UInt64) -> ReplicaState {
    var random = SeededGenerator(seed: seed)
    let ids = (0..<count).map { _ in random.next() >> 32 }
    return ReplicaState(kind: .packedSet).edited(
      to: .data(PackedIntegers.encode(Array(Set(ids)).sorted())), dot: Stamp(generation: generation, origin: origin))
  }

  /// An entry agreed on `count` ids of one write of "a", and the entry of a pull that
  /// joins `added` ids of a write of "b".
  static func agreedAndPulled(_ count: Int, adding added: Int, seed: UInt64) -> (
    agreed: LedgerEntry, pulled: LedgerEntry
  ) {
    let held = packedState(count, origin: "a", generation: 1, seed: seed)
    let agreed = LedgerEntry(generation: 1, agreed: .value(Fingerprint(rawValue: 1)), origin: "a", state: held)
    let pulled = LedgerEntry(
      generation: 2, agreed: .value(Fingerprint(rawValue: 2)), origin: "b",
      state: held.joined(with: packedState(added, origin: "b", generation: 2, seed: seed + 1)))
    return (agreed, pulled)
  }

  /// Runs `body` on a new ledger saved in a folder of its own, removed afterwards.
  static func withSavedLedger(_ body: (inout SavedLedger) throws -> Void) throws {
    let directory = Self.directory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var saved = try SavedLedger(directory: directory)
    try body(&saved)
  }

  static func directory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("zephyr-journal-\(UUID().uuidString)")
  }

  /// A ledger, its journal and its file, saved step by step as the engine saves them.
  struct SavedLedger {
    var ledger = Ledger(epoch: "epoch")
    var journal = LedgerJournal()
    let file: LedgerFile

    init(directory: URL) throws {
      file = LedgerFile(directory: directory, domainName: "journal")
      try file.writeSnapshot(ledger)
    }

    var bytes: Int { (try? Data(contentsOf: file.url).count) ?? 0 }

    /// Sets `key`'s entry and saves; the bytes the save added to the file.
    mutating func save(_ key: String, _ entry: LedgerEntry?) throws -> Int {
      ledger[key] = entry
      journal.note(key, entry)
      let before = bytes
      guard let save = journal.pendingSave(of: ledger) else { return 0 }
      guard case .append = save.kind else {
        Issue.record("expected an append, not a snapshot (\(journal.appendedBytes) bytes appended)")
        return 0
      }
      let written = try file.write(save)
      journal.saved(save, bytes: written, ledger: ledger)
      #expect(bytes - before == written)
      return written
    }

    /// What the file reads back as.
    func decoded() throws -> Ledger? { try file.load()?.ledger }

    /// Whether the file reads back `key`'s entry as `entry` (compared without printing
    /// states of thousands of ids).
    func readsBack(_ key: String, as entry: LedgerEntry?) throws -> Bool { try decoded()?[key] == entry }
  }

  @Test func aPullAppendsItsStateOnceAndSettlesInAFewBytes() throws {
    try Self.withSavedLedger { saved in
      let (agreed, pulled) = Self.agreedAndPulled(5_000, adding: 1, seed: 1)
      let stateBytes = try saved.save("read", agreed)
      #expect(try saved.readsBack("read", as: agreed))

      // Another device's write arrives: written ahead, then settled.
      let ahead = pulled.writtenAhead(replacing: .data(Data([1])), previous: agreed)
      let aheadBytes = try saved.save("read", ahead)
      #expect(aheadBytes < stateBytes + stateBytes / 10, "one state appended, not two (\(aheadBytes) of \(stateBytes))")
      #expect(try saved.readsBack("read", as: ahead), "the state to fall back to reads back")

      let settleBytes = try saved.save("read", pulled)
      #expect(settleBytes < 100, "settling repeats no state (\(settleBytes) bytes)")
      #expect(try saved.readsBack("read", as: pulled))

      // A second pull falls back to the first one's state, which the settling kept.
      let nextState = pulled.state.map { $0.joined(with: Self.packedState(1, origin: "c", generation: 3, seed: 9)) }
      let next = LedgerEntry(generation: 3, agreed: .value(Fingerprint(rawValue: 3)), origin: "c", state: nextState)
      let nextAhead = next.writtenAhead(replacing: .data(Data([2])), previous: pulled)
      #expect(try saved.save("read", nextAhead) < stateBytes + stateBytes / 10)
      #expect(try saved.readsBack("read", as: nextAhead))
    }
  }

  /// A pull whose write was not made falls back; a key removed and written again, or an
  /// entry the file never held, is appended whole. Every step reads back.
  @Test func everyOtherChangeIsAppendedWhole() throws {
    try Self.withSavedLedger { saved in
      let (agreed, other) = Self.agreedAndPulled(500, adding: 3, seed: 4)
      let wholeBytes = try saved.save("read", agreed)
      _ = try saved.save("read", other.writtenAhead(replacing: nil, previous: agreed))
      // The write was not made: back to the agreed entry (a state the file holds only
      // as the one to fall back to).
      _ = try saved.save("read", agreed)
      #expect(try saved.readsBack("read", as: agreed))
      _ = try saved.save("read", nil)
      #expect(try saved.readsBack("read", as: nil))
      // Written ahead with nothing on file to fall back to: the previous state is whole.
      let aheadOfNothing = other.writtenAhead(replacing: nil, previous: agreed)
      #expect(try saved.save("read", aheadOfNothing) > 2 * wholeBytes - wholeBytes / 10)
      #expect(try saved.readsBack("read", as: aheadOfNothing))
    }
  }

  /// A settling record after a damaged one is never read: the file ends at the damage.
  @Test func aTornSettlingReadsAsTheWriteAhead() throws {
    try Self.withSavedLedger { saved in
      let (agreed, pulled) = Self.agreedAndPulled(300, adding: 2, seed: 6)
      _ = try saved.save("read", agreed)
      let ahead = pulled.writtenAhead(replacing: .data(Data([9])), previous: agreed)
      _ = try saved.save("read", ahead)
      let settle = try saved.save("read", pulled)
      let data = try Data(contentsOf: saved.file.url)
      for cut in 1..<settle {
        let decoded = try LedgerCodec.decode(data.dropLast(cut))
        #expect(decoded.ledger["read"] == ahead ? true : false)
        #expect(decoded.damagedTail)
      }
    }
  }
}

/// What goes wrong around references stays with its key, and the file stays bounded
/// across launches.
struct LedgerJournalEdgeTests {
  static func save(_ ledger: Ledger, _ journal: inout LedgerJournal, _ file: LedgerFile) throws
    -> LedgerJournal.Save?
  {
    guard let save = journal.pendingSave(of: ledger) else { return nil }
    journal.saved(save, bytes: try file.write(save), ledger: ledger)
    return save
  }

  /// A state that does not read (a `.custom` value nested 62 deep, which the ledger
  /// refuses to read back) is lost on its own: a pull written ahead that falls back to it
  /// falls back to no state, and the file reads on past it.
  @Test func aStateThatDoesNotReadLosesOnlyItsOwnKey() throws {
    let directory = LedgerJournalTests.directory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = LedgerFile(directory: directory, domainName: "edges")
    var deep = PropertyListValue.integer(1)
    for _ in 0..<62 { deep = .array([deep]) }
    let held = ReplicaState(kind: .custom).edited(to: deep, dot: Stamp(generation: 1, origin: "a"))
    let agreed = LedgerEntry(generation: 1, agreed: LedgerEntry.Agreed(deep), origin: "a", state: held)
    var ledger = Ledger(epoch: "e")
    ledger["read"] = agreed
    ledger["other"] = LedgerEntry(generation: 1, agreed: .value(Fingerprint(rawValue: 10)), origin: "a")
    var journal = LedgerJournal(records: 0, fileBytes: 0)
    _ = try Self.save(ledger, &journal, file)
    #expect(try file.load()?.damagedTail == false, "only the state is lost")
    let pulled = LedgerEntry(
      generation: 2, agreed: .value(Fingerprint(rawValue: 2)), origin: "b",
      state: held.edited(to: .integer(2), dot: Stamp(generation: 2, origin: "b")))
    ledger["read"] = pulled.writtenAhead(replacing: deep, previous: agreed)
    journal.note("read", ledger["read"])
    let ahead = try #require(try Self.save(ledger, &journal, file))
    guard case .append(_, _, let references) = ahead.kind else {
      Issue.record("not an append")
      return
    }
    #expect(references["read"] == .fallsBackToFile)
    ledger["other"] = LedgerEntry(generation: 3, agreed: .value(Fingerprint(rawValue: 30)), origin: "a")
    journal.note("other", ledger["other"])
    _ = try Self.save(ledger, &journal, file)
    let loaded = try #require(try file.load())
    #expect(!loaded.damagedTail)
    #expect(loaded.ledger["other"]?.generation == 3, "another key's later save is read")
    #expect(loaded.ledger["read"]?.generation == 2, "the pull written ahead is read")
    #expect(loaded.ledger["read"]?.pendingPull?.previous?.state == nil, "falling back to no state")
  }

  /// Appends since the last snapshot stay bounded however many launches there are, each
  /// quitting just before the save that would compact.
  @Test func appendsStayBoundedAcrossLaunches() throws {
    let directory = LedgerJournalTests.directory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = LedgerFile(directory: directory, domainName: "edges")
    var ledger = Ledger(epoch: "e")
    for index in 0..<200 {
      ledger["small\(index)"] = LedgerEntry(generation: 1, agreed: .value(Fingerprint(rawValue: 1)), origin: "a")
    }
    let state = LedgerJournalTests.packedState(5_000, origin: "a", generation: 1, seed: 3)
    ledger["big"] = LedgerEntry(generation: 1, agreed: .value(Fingerprint(rawValue: 1)), origin: "a", state: state)
    var journal = LedgerJournal(records: 0, fileBytes: 0)
    _ = try Self.save(ledger, &journal, file)
    let snapshotBytes = try Data(contentsOf: file.url).count
    var recordBytes = 0
    for launch in 0..<3 {
      if launch > 0 {
        let loaded = try #require(try file.load())
        ledger = loaded.ledger
        journal = LedgerJournal(records: loaded.records, fileBytes: loaded.bytes)
      }
      while true {
        ledger["big"]?.generation += 1
        journal.note("big", ledger["big"])
        guard let save = journal.pendingSave(of: ledger), case .append = save.kind else { break }
        recordBytes = try file.write(save)
        journal.saved(save, bytes: recordBytes, ledger: ledger)
      }
    }
    let appended = try Data(contentsOf: file.url).count - snapshotBytes
    #expect(appended <= LedgerJournal.minimumAppendedBytes + recordBytes, "after a \(snapshotBytes)-byte snapshot")
  }
}

/// The references in the engine: a device that stops between a pull's ledger save and its
/// `UserDefaults` write, its ledger appended with references, relaunches to the state it
/// held before that pull, and loses nothing.
struct LedgerJournalRelaunchTests {
  @Test func aRelaunchAfterAnInterruptedPullFallsBackToTheStateOnFile() throws {
    let harness = Harness()
    let (a, b) = harness.devicesAgreeing(on: Array(1...2_000))
    let key = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)
    // A first pull, settled: the file holds its state.
    b.coordinator.insert(5_001, into: key)
    b.settle()
    harness.cloud.deliver()
    a.settle()
    #expect(a.coordinator[key].contains(5_001))
    let settled = a.coordinator.engine.state.withLock { $0.ledger["read"] }
    // A second pull stops before it writes to UserDefaults.
    b.coordinator.insert(5_002, into: key)
    b.settle()
    harness.cloud.upload()
    a.coordinator.engine.testHooks.withLock { hooks in
      hooks.crashBefore = { point in if case .defaults("read") = point { true } else { false } }
    }
    harness.cloud.download(to: "A")
    a.settle()
    let onFile = try #require(try a.coordinator.engine.ledgerFile.load()?.ledger["read"])
    #expect(onFile.pendingPull != nil, "the pull was written ahead")
    #expect(onFile.pendingPull?.previous?.state == settled?.state ? true : false, "with the first pull's state")

    a.restart()
    a.coordinator.insert(5_003, into: key)
    a.settle()
    harness.cloud.deliver()
    b.settle()
    a.coordinator.sync()
    a.settle()
    harness.cloud.deliver()
    b.settle()
    let expected = PackedSet<UInt32>(Array(1...2_000) + [5_001, 5_002, 5_003])
    #expect(a.coordinator[key] == expected ? true : false, "A holds every id")
    #expect(b.coordinator[key] == expected ? true : false, "B holds every id")
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The rules `SimulatedCloudKit` enforces, checked on its stores directly (no
/// coordinator): change tags, zones, record and request limits, quota, echoes, crashes
/// and accounts.
struct SimulatedCloudKitRuleTests {
  /// A cloud whose observers run on the calling thread, and a collector of what `name`
  /// posts.
  private static func world(_ names: [String] = ["A", "B"]) -> (SimulatedCloudKit, Locked<[ExternalChange]>, [Any]) {
    let cloudKit = SimulatedCloudKit(delivery: .callingThread)
    let events = Locked<[ExternalChange]>([])
    var tokens: [Any] = []
    for name in names {
      let device = cloudKit.device(name, initiallyDownloaded: true)
      tokens.append(device.observeExternalChanges { change in events.withLock { $0.append(change) } })
    }
    return (cloudKit, events, tokens)
  }

  @Test func aSaveOverAnUnseenVersionFailsAndTheServerVersionBecomesTheValue() {
    let (cloudKit, events, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.device("A").setValue(.string("a"), forKey: "k")
    cloudKit.device("B").setValue(.string("b"), forKey: "k")
    cloudKit.upload(from: "A")
    events.withLock { $0 = [] }
    cloudKit.upload(from: "B")
    #expect(cloudKit.serverValues["k"] == .string("a"), "the first save to arrive wins")
    #expect(cloudKit.device("B").value(forKey: "k") == .string("a"), "the loser holds the server's version")
    #expect(cloudKit.device("B").pendingKeys.isEmpty)
    #expect(events.withLock { $0 } == [ExternalChange(reason: .serverChange, keys: ["k"])])
    // What the loser writes next starts from the version it was shown: it is accepted.
    cloudKit.device("B").setValue(.string("merged"), forKey: "k")
    cloudKit.upload(from: "B")
    #expect(cloudKit.serverValues["k"] == .string("merged"))
  }

  @Test func nothingIsSentBeforeTheFirstFetch() {
    let cloudKit = SimulatedCloudKit(delivery: .callingThread)
    let fresh = cloudKit.device("N")
    fresh.setValue(.integer(1), forKey: "k")
    cloudKit.upload(from: "N")
    #expect(cloudKit.serverValues.isEmpty)
    #expect(fresh.pendingKeys == ["k"], "kept, not dropped")
    cloudKit.download(to: "N")
    cloudKit.upload(from: "N")
    #expect(cloudKit.serverValues["k"] == .integer(1))
  }

  @Test func theFirstFetchReportsInitialSyncAndTheCloudWinsOverUnsentWrites() {
    let cloudKit = SimulatedCloudKit(delivery: .callingThread)
    let a = cloudKit.device("A", initiallyDownloaded: true)
    a.setValue(.string("cloud"), forKey: "k")
    cloudKit.upload(from: "A")
    let fresh = cloudKit.device("N")
    let events = Locked<[ExternalChange]>([])
    let token = fresh.observeExternalChanges { change in events.withLock { $0.append(change) } }
    defer { token.cancel() }
    fresh.setValue(.string("new install"), forKey: "k")
    fresh.setValue(.string("only here"), forKey: "mine")
    cloudKit.download(to: "N")
    #expect(fresh.value(forKey: "k") == .string("cloud"))
    #expect(fresh.pendingKeys == ["mine"])
    #expect(events.withLock { $0 } == [ExternalChange(reason: .initialSync, keys: ["k"])])
  }

  @Test(arguments: [true, false])
  func ownSavesEchoingBackChangeNothing(echo: Bool) {
    let (cloudKit, events, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.echoesOwnSaves = echo
    cloudKit.device("A").setValue(.integer(1), forKey: "k")
    cloudKit.upload(from: "A")
    events.withLock { $0 = [] }
    cloudKit.download(to: "A")
    #expect(events.withLock { $0 }.isEmpty)
    cloudKit.device("A").setValue(.integer(2), forKey: "k")
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues["k"] == .integer(2), "the tag A holds is the server's")
  }

  @Test func aBatchCarriesAtMost400Changes() {
    let (cloudKit, _, tokens) = Self.world(["A"])
    defer { _ = tokens }
    for index in 0..<1_001 { cloudKit.device("A").setValue(.integer(Int64(index)), forKey: "k\(index)") }
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues.count == 1_001)
    #expect(cloudKit.device("A").statistics.requests == 3)
    #expect(cloudKit.device("A").pendingKeys.isEmpty)
  }

  @Test func aRecordOver1MBIsRefusedByTheStore() {
    let (cloudKit, events, tokens) = Self.world(["A"])
    defer { _ = tokens }
    cloudKit.device("A").setValue(.data(Data(count: 1_048_577)), forKey: "huge")
    #expect(cloudKit.device("A").value(forKey: "huge") == nil)
    #expect(events.withLock { $0 } == [ExternalChange(reason: .quotaViolation, keys: ["huge"])])
  }

  @Test func anAtomicBatchIsAppliedWholeOrNotAtAllAndNothingIsDropped() {
    let (cloudKit, _, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.atomicBatches = true
    cloudKit.device("B").setValue(.string("b"), forKey: "k0")
    cloudKit.upload(from: "B")
    for index in 0..<5 { cloudKit.device("A").setValue(.string("a\(index)"), forKey: "k\(index)") }
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues == ["k0": .string("b")], "one conflict rejects the batch")
    #expect(cloudKit.device("A").pendingKeys == ["k1", "k2", "k3", "k4"], "the others are kept")
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues.count == 5)
  }

  @Test func quotaIsHeldWithABackoffThenReleased() {
    let (cloudKit, events, tokens) = Self.world(["A"])
    defer { _ = tokens }
    cloudKit.quotaBytes = 10
    cloudKit.device("A").setValue(.string("twenty bytes of text"), forKey: "k")
    cloudKit.upload(from: "A")
    #expect(events.withLock { $0 } == [ExternalChange(reason: .quotaViolation, keys: ["k"])])
    cloudKit.upload(from: "A")
    #expect(cloudKit.device("A").statistics.requests == 1, "not retried during the backoff")
    cloudKit.quotaBytes = nil
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues.isEmpty, "still backing off")
    cloudKit.advanceClock(by: CloudKitStoreState.initialQuotaBackoff)
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues["k"] == .string("twenty bytes of text"))
    #expect(events.withLock { $0.count } == 1, "reported once")
  }

  @Test func aCrashBeforeTheStateIsSavedRepeatsTheEventAndLosesNothing() {
    let (cloudKit, _, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.device("A").setValue(.integer(1), forKey: "k")
    cloudKit.device("A").synchronize()
    cloudKit.crash("A", before: .stateSaved)
    cloudKit.upload(from: "A")
    #expect(cloudKit.device("A").statistics.crashes == 1)
    #expect(cloudKit.device("A").pendingKeys == ["k"], "the queue was saved before")
    for _ in 0..<3 { cloudKit.deliver() }
    #expect(cloudKit.serverValues["k"] == .integer(1))
    #expect(cloudKit.device("B").value(forKey: "k") == .integer(1))
    #expect(cloudKit.device("A").pendingKeys.isEmpty)
  }

  @Test func aDeletedThenRecreatedKeySendsItsLastState() {
    let (cloudKit, _, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.device("A").setValue(.integer(1), forKey: "k")
    cloudKit.upload(from: "A")
    cloudKit.device("A").removeValue(forKey: "k")
    cloudKit.device("A").setValue(.integer(2), forKey: "k")
    cloudKit.deliver()
    #expect(cloudKit.serverValues["k"] == .integer(2))
    #expect(cloudKit.device("B").value(forKey: "k") == .integer(2))
  }

  @Test func zoneNotFoundRecreatesTheZoneAndSendsEverythingAgain() {
    let (cloudKit, _, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.device("A").setValue(.integer(1), forKey: "old")
    cloudKit.upload(from: "A")
    cloudKit.device("A").setValue(.integer(2), forKey: "new")
    cloudKit.failNextSend(of: "A", with: .zoneNotFound)
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues.isEmpty)
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues == ["old": .integer(1), "new": .integer(2)])
  }

  @Test(arguments: [SimulatedCloudKit.ZoneDeletion.deleted, .encryptedDataReset])
  func aDeletedZoneOrAnEncryptedDataResetIsRefilledFromTheDevices(reason: SimulatedCloudKit.ZoneDeletion) {
    let (cloudKit, _, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.device("A").setValue(.integer(1), forKey: "k")
    cloudKit.deliver()
    cloudKit.deleteZone(reason)
    cloudKit.download()
    cloudKit.upload()
    #expect(cloudKit.serverValues == ["k": .integer(1)])
    #expect(cloudKit.device("B").value(forKey: "k") == .integer(1))
  }

  @Test func aPurgeIsNotSentAgainUntilTheAppResumes() {
    let (cloudKit, _, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.device("A").setValue(.integer(1), forKey: "k")
    cloudKit.deliver()
    cloudKit.deleteZone(.purged)
    cloudKit.download()
    #expect(cloudKit.device("A").isPausedAfterPurge)
    cloudKit.device("A").setValue(.integer(2), forKey: "k")
    cloudKit.upload()
    #expect(cloudKit.serverValues.isEmpty)
    cloudKit.device("A").resumeAfterPurge()
    cloudKit.upload()
    #expect(cloudKit.serverValues == ["k": .integer(2)])
  }

  @Test func unknownItemSavesTheValueAsANewRecord() {
    let (cloudKit, _, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.device("A").setValue(.integer(1), forKey: "k")
    cloudKit.upload(from: "A")
    cloudKit.device("A").setValue(.integer(2), forKey: "k")
    cloudKit.failNextSend(of: "A", with: .unknownItem)
    cloudKit.upload(from: "A")
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues["k"] == .integer(2))
  }

  @Test func aRejectedBatchOrANetworkFailureLosesNothing() {
    let (cloudKit, _, tokens) = Self.world()
    defer { _ = tokens }
    for index in 0..<3 { cloudKit.device("A").setValue(.integer(Int64(index)), forKey: "k\(index)") }
    cloudKit.failNextSend(of: "A", with: .batchRequestFailed)
    cloudKit.upload(from: "A")
    cloudKit.failNextSend(of: "A", with: .networkFailure)
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues.isEmpty)
    cloudKit.upload(from: "A")
    #expect(cloudKit.serverValues.count == 3)
  }

  @Test func aSignOutKeepsNothingOfTheAccountAndASignInFetchesTheNewOne() {
    let (cloudKit, events, tokens) = Self.world()
    defer { _ = tokens }
    cloudKit.device("A").setValue(.integer(1), forKey: "k")
    cloudKit.deliver()
    events.withLock { $0 = [] }
    cloudKit.signOut(of: "B")
    #expect(cloudKit.device("B").cachedValues.isEmpty)
    cloudKit.switchAccount(of: "B", to: SimulatedCloudKit.defaultAccount)
    #expect(cloudKit.device("B").value(forKey: "k") == .integer(1))
    #expect(events.withLock { $0.map(\.reason) } == [.accountChange, .accountChange])
  }

  @Test func theStateFileReadsBackExactly() throws {
    var state = CloudKitStoreState()
    state.engineState = Data([1, 2, 3])
    state.server["k"] = MirrorRecord(
      recordName: "k", key: "k", payload: CloudKitPayload.encode(.integer(7)), changeTag: "t9",
      systemFields: Data([9]))
    state.pending["h-x"] = .init(key: "a key/with slash", value: nil, sequence: 4)
    state.sequence = 4
    state.hasFetched = true
    state.quotaRetryDate = Date(timeIntervalSince1970: 1_000.5)
    state.generations = ["k": 12, "h-x": UInt64.max - 1]
    #expect(try CloudKitStateCodec.decode(CloudKitStateCodec.encode(state)) == state)
    for reason in StoreReset.Reason.allCases {
      state.lastReset = StoreReset(reason: reason, date: Date(timeIntervalSince1970: 2_000.25))
      #expect(try CloudKitStateCodec.decode(CloudKitStateCodec.encode(state)) == state)
    }
    var damaged = CloudKitStateCodec.encode(state)
    damaged[damaged.count / 2] ^= 0xff
    #expect(throws: LedgerError.self) { try CloudKitStateCodec.decode(damaged) }
  }

  @Test(arguments: [
    "theme", "com.example.font-size", "_private", "a key", "h-abc", String(repeating: "x", count: 300), "é",
  ])
  func recordNamesAreCloudKitsOrAHash(key: String) {
    let name = CloudKitRecordName.name(for: key)
    #expect(name.utf8.count <= 255)
    #expect(!name.hasPrefix("_"))
    #expect(name.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: " ") })
    #expect((name == key) == (key == "theme" || key == "com.example.font-size"))
  }
}

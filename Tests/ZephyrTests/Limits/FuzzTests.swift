import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Fuzzing (issue 5): well over 10,000 generated bad inputs per run, through the server
/// (a foreign writer), inbound events, local defaults with odd names, `sync(keys:)` and
/// the Apple adapter's notification parsing. Never a crash, never a local value lost to
/// garbage, and `status.refusedKeys` names what was refused and why.
///
/// A store value that is not record-shaped is a foreign write, which is pulled as a
/// newer value (MergeSemantics.md, "Foreign writes"): for those the local value must
/// become exactly that value. For record-shaped garbage (malformed, or of a newer
/// format) the local value must not move.
struct FuzzTests {
  static let chunks = 8
  static let mutatedPerChunk = 1_250
  static let keys = (0..<8).map { "fuzz.\($0)" }
  /// Where valid records at the largest generation go: they freeze their key (see
  /// ``recordAtTheLargestGenerationDoesNotFreezeTheKey()``), which would turn every later
  /// input of that key into the same finding.
  static let topKey = "fuzz.top"

  /// The seed of chunk 0; chunk `n` uses `baseSeed + n`. Every input derives from it, and
  /// a failure names its chunk, index and seed: `ZEPHYR_FUZZ_SEED=S swift test --filter
  /// FuzzTests` replays a run. (Threads are not seeded: deliveries are awaited one by one.)
  static var baseSeed: UInt64 {
    ProcessInfo.processInfo.environment["ZEPHYR_FUZZ_SEED"].flatMap(UInt64.init) ?? 0xF022
  }

  /// How a store value reaches the device.
  enum Route: CaseIterable {
    case downloadWithEvent, replayedEvent, syncKeys, fullSync, initialSyncForAll
  }

  /// One device in steady state over `keys`: every key synced, the store agreeing.
  private static func steadyDevice(_ harness: Harness) -> TestDevice {
    let a = harness.device("A", monitored: keys + [topKey]) { $0.tombstoneLifetime = nil }
    for (index, key) in keys.enumerated() { a.set(.string("local \(index)"), key) }
    a.coordinator.sync()
    harness.cloud.upload()
    return a
  }

  /// Puts `garbage` on the server under `key`, lets it reach A by `route`, and checks
  /// what A did with it. Returns whether the input reached A.
  @discardableResult
  private static func deliver(
    _ garbage: PropertyListValue, to key: String, by route: Route, in harness: Harness, origin: String = ""
  ) -> Bool {
    let a = harness.device("A")
    // A download skips keys with writes not uploaded yet (A repairs what it refused).
    harness.cloud.upload(from: "A")
    guard a.store.value(forKey: key) != garbage else { return false }  // no change, no event
    let before = a.value(key)
    // An initial download forgets the device's own writes the store does not hold: with
    // no history left, a foreign value meets the local one as a conflict, which sync()
    // decides for the local value.
    let hadHistory = a.coordinator.engine.state.withLock { $0.ledger[key] != nil }
    harness.cloud.setServerValue(garbage, forKey: key)
    switch route {
    case .downloadWithEvent:
      harness.cloud.download(to: "A", notify: true)
    case .replayedEvent:
      harness.cloud.download(to: "A", notify: false)
      harness.cloud.post(ExternalChange(reason: .serverChange, keys: [key, "no.such.key", key]), to: "A")
    case .syncKeys:
      harness.cloud.download(to: "A", notify: false)
      a.coordinator.sync(keys: [key])
    case .fullSync:
      harness.cloud.download(to: "A", notify: false)
      a.coordinator.sync()
    case .initialSyncForAll:
      harness.cloud.download(to: "A", notify: false)
      harness.cloud.post(ExternalChange(reason: .initialSync, keys: nil), to: "A")
    }
    // Whatever the delivery queued (a quota violation, a request queued for a running
    // operation) is applied before the outcome is read.
    harness.cloud.waitForDeliveries()
    a.settle()
    let after = a.value(key)
    let refusal = a.coordinator.status.refusedKeys[key]
    let context = "\(garbage.logDescription) under \(key) by \(route) \(origin)"
    switch Garbage.kind(of: garbage) {
    case .malformed:
      #expect(after == before, "a malformed record changed the local value: \(context)")
      guard case .malformedRecord? = refusal else {
        Issue.record("status names \(String(describing: refusal)), not a malformed record: \(context)")
        return true
      }
    case .unsupported(let tag):
      #expect(after == before, "a newer-format record changed the local value: \(context)")
      #expect(refusal == .unsupportedFormat(tag), "\(context)")
    case .foreign where !hadHistory && [.syncKeys, .fullSync].contains(route):
      #expect(after == before || after == garbage, "a foreign value met without history: \(context)")
      #expect(refusal == nil, "\(context)")
    case .foreign:
      #expect(after == garbage, "a foreign value is pulled as a newer write: \(context)")
      #expect(refusal == nil, "\(context)")
    case .record(let value):
      // Valid: pulled when newer than the ledger, otherwise A pushes its state again.
      #expect(after == before || after == value, "\(context)")
      #expect(refusal == nil, "\(context)")
    case .state:
      switch refusal {
      case .malformedRecord?, .strategyCannotMerge?, .unsupportedFormat?:
        #expect(after == before, "a refused state record changed the local value: \(context)")
      case nil: break
      case let other?: Issue.record("status names \(other) for a state record: \(context)")
      }
    case .compressed:
      switch refusal {
      case .unreadableCompressedRecord?, .malformedRecord?, .strategyCannotMerge?, .unsupportedFormat?:
        #expect(after == before, "a refused compressed record changed the local value: \(context)")
      case nil: break
      case let other?: Issue.record("status names \(other) for a compressed record: \(context)")
      }
    }
    #expect(a.store.statistics.keyLengthExceptions == 0)
    return true
  }

  @Test func atLeastTenThousandBadStoreValuesOfEveryKindPerRun() {
    #expect(Garbage.systematic.count + Self.chunks * Self.mutatedPerChunk >= 10_000)
    var random = SeededGenerator(seed: 0xF022)
    var kinds: [String: Int] = [:]
    for value in Garbage.systematic + (0..<Self.mutatedPerChunk).map({ _ in Garbage.mutated(using: &random) }) {
      let kind: String =
        switch Garbage.kind(of: value) {
        case .foreign: "foreign"
        case .malformed: "malformed"
        case .unsupported: "unsupported"
        case .record(let value): value == nil ? "tombstone" : "record"
        case .state: "state"
        case .compressed: "compressed"
        }
      kinds[kind, default: 0] += 1
    }
    for kind in ["foreign", "malformed", "unsupported", "record", "tombstone", "compressed"] {
      #expect(kinds[kind, default: 0] >= 40, "\(kind): \(kinds)")
    }
    print("FuzzTests: store values per kind in one chunk: \(kinds.sorted { $0.key < $1.key })")
  }

  @Test(arguments: 0..<chunks)
  func badStoreValuesNeverCrashOrLoseLocalValues(chunk: Int) {
    let harness = Harness()
    _ = Self.steadyDevice(harness)
    var inputs = chunk == 0 ? Garbage.systematic : []
    let seed = Self.baseSeed + UInt64(chunk)
    var random = SeededGenerator(seed: seed)
    for _ in 0..<Self.mutatedPerChunk { inputs.append(Garbage.mutated(using: &random)) }
    var delivered = 0
    for (index, garbage) in inputs.enumerated() {
      let route = Route.allCases[index % Route.allCases.count]
      var top = false
      if case .record = Garbage.kind(of: garbage) { top = Garbage.generation(of: garbage) == Garbage.maximumGeneration }
      let key = top ? Self.topKey : Self.keys[index % Self.keys.count]
      let origin = "chunk \(chunk) #\(index), seed \(seed) (replay: ZEPHYR_FUZZ_SEED=\(Self.baseSeed))"
      if Self.deliver(garbage, to: key, by: route, in: harness, origin: origin) { delivered += 1 }
    }
    #expect(delivered >= inputs.count * 9 / 10)
  }

  @Test func hugeAndDeeplyNestedStoreValuesAreHandled() {
    let harness = Harness()
    let a = Self.steadyDevice(harness)
    let deep = Garbage.nested(200)
    let inputs: [(PropertyListValue, String)] = [
      (Garbage.record("z1", .integer(1_000), .string("dev"), deep), "fuzz.0"),
      (deep, "fuzz.1"),
      (Garbage.record("z1", .string("x"), .string("dev"), deep), "fuzz.2"),
      (Garbage.record("z1", .string("x"), .string("dev"), Garbage.huge(1_100_000)), "fuzz.3"),
      (Garbage.record("z7", .integer(3), .string("dev"), Garbage.huge(1_100_000)), "fuzz.4"),
      (Garbage.huge(1_100_000), "fuzz.5"),
    ]
    for (garbage, key) in inputs {
      #expect(Self.deliver(garbage, to: key, by: .downloadWithEvent, in: harness))
    }
    #expect(a.value("fuzz.0") == deep, "a valid record holding 200 nested arrays is pulled intact")
    // The 1.1 MB foreign value was pulled; it can never be pushed back, and says why.
    a.coordinator.sync()
    harness.cloud.upload()
    #expect(a.value("fuzz.5") == Garbage.huge(1_100_000))
  }

  /// Found by the fuzzing: a record at the largest generation (2^53) from a device whose
  /// id sorts high froze the key, since nothing can be written above it. A record that
  /// jumps more than 2^40 above the agreed generation is now refused as forged: it is
  /// named in status, treated as absent, and the agreed value is published over it.
  @Test func recordAtTheLargestGenerationDoesNotFreezeTheKey() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["k"])
    let b = harness.device("B", monitored: ["k"])
    a.set(.string("local"), "k")
    harness.round()
    let top = Garbage.record("z1", .integer(Garbage.maximumGeneration), .string("zzz"), .string("top"))
    harness.cloud.setServerValue(top, forKey: "k")
    harness.cloud.download(to: "B")
    #expect(b.value("k") == .string("local"), "a forged generation is not taken")
    guard case .malformedRecord? = b.coordinator.status.refusedKeys["k"] else {
      Issue.record("status does not name the forged record")
      return
    }
    harness.round()
    a.set(.string("edit"), "k")
    harness.round()
    harness.round()
    #expect(a.value("k") == .string("edit"))
    #expect(b.value("k") == .string("edit"))
  }

  @Test func badEventsChangeNothingInSteadyState() {
    let harness = Harness()
    let a = Self.steadyDevice(harness)
    let locals = Self.keys.map { a.value($0) }
    let writes = a.store.statistics.writes
    let long = String(repeating: "é", count: 40)
    var lists: [[String]?] = [
      nil, [], ["no.such.key"], [""], [long], Self.keys + Self.keys, ["fuzz.0\u{0}"],
      (0..<50_000).map { "k\($0)" } + Self.keys,
    ]
    var random = SeededGenerator(seed: 0xE7)
    for _ in 0..<1_500 {
      let pool = Self.keys + ["", "no.such.key", long, "NSFoo", "Zephyr.v5.versions", "fuzz"]
      lists.append(Bool.random(using: &random) ? nil : pool.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
    }
    let reasons: [ExternalChange.Reason] = [.serverChange, .initialSync, .quotaViolation, .accountChange]
    for (index, keys) in lists.enumerated() {
      harness.cloud.post(ExternalChange(reason: reasons[index % reasons.count], keys: keys), to: "A")
    }
    #expect(Self.keys.map { a.value($0) } == locals)
    #expect(a.store.statistics.writes == writes, "every key already agrees: nothing to write")
  }

  @Test func oddLocalKeysAreRefusedByNameAndKeepTheirValues() {
    let harness = Harness()
    let a = harness.device("A")
    var random = SeededGenerator(seed: 0x10CA1)
    let alphabet = Array("aZ9._-é☾ü \u{1F600}")
    var keys = [
      String(repeating: "k", count: 64), String(repeating: "k", count: 65), String(repeating: "é", count: 33),
      String(repeating: "x", count: 10_000), "NSWindow", "AppleLocale", "com.apple.x", "Zephyr.deviceID",
      "ZephyrSyncKey", "a\u{0}b", "\u{1F600}",
    ]
    for _ in 0..<600 {
      keys.append(
        String((0..<Int.random(in: 1...90, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? "a" }))
    }
    for (index, key) in Set(keys).sorted().enumerated() {
      let value = PropertyListValue.string("odd \(index)")
      a.set(value, key)
      a.coordinator.addKeysToBeMonitored(keys: [key])
      a.coordinator.sync(keys: [key])
      harness.cloud.post(ExternalChange(reason: .serverChange, keys: [key]), to: "A")
      let refusal = a.coordinator.status.refusedKeys[key]
      let bytes = key.utf8.count
      if key.hasPrefix("Zephyr.") || key == "ZephyrSyncKey" {
        #expect(refusal == .bookkeepingKey, "\(key)")
      } else if ["NS", "Apple", "com.apple."].contains(where: key.hasPrefix) {
        #expect(refusal == .systemKey, "\(key)")
      } else if bytes > 64 {
        #expect(refusal == .keyTooLong(bytes: bytes, limit: 64), "\(key)")
        #expect(!a.coordinator.monitoredKeys.contains(key))
      } else {
        #expect(refusal == nil, "\(key)")
      }
      // Zephyr's own keys are its to write (the legacy stamp is removed, by design).
      if refusal != .bookkeepingKey { #expect(a.value(key) == value, "\(key)") }
      a.coordinator.removeKeysFromBeingMonitored(keys: [key])
      a.remove(key)
    }
    a.coordinator.sync()
    harness.cloud.upload()
    #expect(a.store.statistics.keyLengthExceptions == 0)
    #expect(harness.cloud.serverValues.keys.allSatisfy { $0.utf8.count <= 64 })
  }

  @Test func oversizedAndDeeplyNestedLocalValuesAreRefusedOrSyncedIntact() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["huge", "deep", "fine"])
    let b = harness.device("B", monitored: ["huge", "deep", "fine"])
    let deep = Garbage.nested(200, around: .string("bottom"))
    a.set(Garbage.huge(1_100_000), "huge")
    a.set(deep, "deep")
    a.set(.string("fine"), "fine")
    a.coordinator.sync()
    harness.round()
    guard case .overQuota? = a.coordinator.status.refusedKeys["huge"] else {
      Issue.record("status names \(String(describing: a.coordinator.status.refusedKeys["huge"])), not over quota")
      return
    }
    #expect(a.value("huge") == Garbage.huge(1_100_000), "the refused value stays")
    #expect(b.value("deep") == deep)
    #expect(b.value("fine") == .string("fine"))
    #expect(b.value("huge") == nil)
    #expect(a.store.statistics.quotaViolations == 0, "refused before the store had to")
  }

  @Test func garbageNotificationsParseToAKnownReason() {
    let names = UbiquitousNotificationNames(
      didChangeExternally: Notification.Name("fuzz"), reasonKey: "reason", changedKeysKey: "keys")
    var random = SeededGenerator(seed: 0xB0B)
    let reasons: [Any?] = [
      nil, NSNumber(value: -1), NSNumber(value: 4), NSNumber(value: 99), Int.max, Int.min, "0", 1.5,
      NSNumber(value: true),
      [0], NSNull(),
    ]
    let keyLists: [Any?] = [
      nil, ["a", "b"], [1, 2], "a", ["a", 1], NSNull(), [String](), Array(repeating: "k", count: 10_000),
    ]
    var count = 0
    for _ in 0..<2_000 {
      var info: [AnyHashable: Any] = [:]
      if let reason = reasons.randomElement(using: &random) ?? nil { info["reason"] = reason }
      if let keys = keyLists.randomElement(using: &random) ?? nil { info["keys"] = keys }
      if Bool.random(using: &random) { info[42] = "unrelated" }
      let passed = Bool.random(using: &random) ? info : nil
      let change = UbiquitousStore.change(from: passed, names: names)
      let raw = (passed?["reason"] as? NSNumber)?.intValue ?? (passed?["reason"] as? Int)
      let expected = raw.flatMap(ExternalChange.Reason.init(rawValue:)) ?? .serverChange
      #expect(change.reason == expected, "\(String(describing: passed))")
      #expect(change.keys == passed?["keys"] as? [String], "\(String(describing: passed))")
      count += 1
    }
    #expect(count == 2_000)
  }
}

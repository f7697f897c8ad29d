import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The compact form of a `.set`'s and a `.union`'s state (``ElementMembership``): it
/// reads back as the state written, writes each element's bytes and each dictionary key
/// once, stays within 1.2× of the JSON + DEFLATE blob apps write by hand, and damaged
/// bytes give a reason, never a crash or a lost local value.
struct ElementStateCodecTests {
  /// A starred article as an RSS reader keeps it: short keys, a title and a URL of
  /// varied words.
  private struct Article: Codable, SyncValue, Hashable {
    var id: UInt32
    var title: String
    var url: String
    var date: Date

    enum CodingKeys: String, CodingKey {
      case id = "i"
      case title = "t"
      case url = "u"
      case date = "d"
    }
  }

  private static let words = """
    apple autumn bridge budget canyon castle cedar chorus circuit climate coastal comet compass copper \
    cotton crystal dawn delta desert dragon drift eagle echo ember engine falcon fern festival field \
    flame forest fossil fountain galaxy garden glacier granite harbor harvest hazel horizon island \
    ivory jasmine jungle kettle lantern lava ledger lemon lighthouse lunar maple marble meadow meteor \
    how why what new best guide review notes update first last inside behind under over after before
    """.split(separator: " ").map(String.init)

  /// `count` articles with seeded, varied titles and URLs.
  private static func articles(_ count: Int, seed: UInt64) -> [Article] {
    var random = SeededGenerator(seed: seed)
    return (0..<count).map { number in
      let title = (0..<(4 + Int(random.next() % 7))).map { _ in words[Int(random.next() % UInt64(words.count))] }
      let id = UInt32(truncatingIfNeeded: random.next())
      return Article(
        id: id, title: title.joined(separator: " ").capitalized,
        url: "https://site\(random.next() % 9).example/\(2020 + number % 6)/\(title.prefix(5).joined(separator: "-"))",
        date: Date(timeIntervalSince1970: 1_700_000_000 + Double(random.next() % 10_000_000)))
    }
  }

  private static func state(_ kind: ReplicaKind, _ groups: [(String, UInt64, [PropertyListValue])]) -> ReplicaState {
    var context = VersionVector()
    var parts: [Stamp: [PropertyListValue]] = [:]
    for (origin, generation, items) in groups {
      let dot = Stamp(generation: generation, origin: origin)
      context.include(dot)
      parts[dot] = items
    }
    return ReplicaState(kind: kind, groups: parts, context: context)
  }

  private static func blob(of state: ReplicaState) throws -> Data {
    let fields = state.computedFields
    guard case .data(let blob) = fields[3] else { throw Unexpected.notData(fields[3].logDescription) }
    return blob
  }

  private enum Unexpected: Error {
    case notData(String)
  }

  /// Values of every property-list kind, nested, with dates in whole and in fractional
  /// seconds (and -0.0, which whole seconds cannot carry).
  private static let samples: [PropertyListValue] = [
    .string(""), .string("héllo\nwörld"), .integer(0), .integer(-1), .integer(.min), .integer(.max),
    .unsignedInteger(.max), .double(-0.0), .double(3.25), .double(.infinity), .bool(true), .bool(false),
    .date(Date(timeIntervalSinceReferenceDate: 0)),
    .date(Date(timeIntervalSinceReferenceDate: 751_234_567)), .date(Date(timeIntervalSinceReferenceDate: 1.5)),
    .date(Date(timeIntervalSinceReferenceDate: -9e15)), .data(Data()), .data(Data([0, 1, 0xFF])),
    .array([]), .array([.string("a"), .array([.integer(2)])]), .dictionary([:]),
    .dictionary(["t": .string("x"), "i": .integer(7), "n": .dictionary(["t": .bool(true)])]),
  ]

  @Test(arguments: [ReplicaKind.set, .union])
  func everyKindOfElementReadsBackAsWritten(kind: ReplicaKind) throws {
    let state = Self.state(
      kind,
      [
        ("a", 3, Array(Self.samples.prefix(12))), ("b", 5, Array(Self.samples.dropFirst(8))), ("a", 9, []),
        ("c", 12, [.string("héllo\nwörld"), .string("only here")]),
      ])
    let read = try ReplicaState.decode(state.computedFields).get()
    #expect(read == state)
    #expect(read.value(strategy: .set, key: "k") == state.value(strategy: .set, key: "k"))
    // Bit for bit: a date at -0.0 seconds stays -0.0 (whole seconds could not carry it).
    let negativeZero = Self.state(kind, [("a", 1, [.date(Date(timeIntervalSinceReferenceDate: -0.0))])])
    let zero = try ReplicaState.decode(negativeZero.computedFields).get().parts.map { part -> UInt64? in
      if case .date(let date) = part.part { return date.timeIntervalSinceReferenceDate.bitPattern }
      return nil
    }
    #expect(zero == [Double(-0.0).bitPattern])
  }

  /// Random states of random nested values, some held by several writes (added on two
  /// devices at once), read back as written; seeded, so every run checks the same ones.
  @Test(arguments: [ReplicaKind.set, .union], [UInt64(1), 2, 3])
  func randomStatesReadBackAsWritten(kind: ReplicaKind, seed: UInt64) throws {
    var random = SeededGenerator(seed: seed)
    for _ in 0..<60 {
      let pool = (0..<8).map { _ in RandomValues.value(using: &random) }
      let groups = (0..<Int.random(in: 1...5, using: &random)).map { number in
        (["a", "b", "c"][number % 3], UInt64(number + 1), pool.filter { _ in Bool.random(using: &random) })
      }
      let state = Self.state(kind, groups)
      #expect(try ReplicaState.decode(state.computedFields).get() == state)
    }
  }

  @Test func anElementTwoWritesHoldIsWrittenOnceAndAKeyOnce() throws {
    let shared = PropertyListValue.dictionary([
      "a-long-field-name": .string("an element added on two devices at once"), "other-field": .integer(1),
    ])
    let state = Self.state(
      .set,
      [
        ("a", 1, [shared, .dictionary(["a-long-field-name": .string("x"), "other-field": .integer(2)])]),
        ("b", 1, [shared]),
      ])
    let blob = try Self.blob(of: state)
    func occurrences(_ text: String) -> Int {
      let needle = Array(text.utf8)
      let bytes = [UInt8](blob)
      return (0...(bytes.count - needle.count)).filter { Array(bytes[$0..<($0 + needle.count)]) == needle }.count
    }
    #expect(occurrences("an element added on two devices at once") == 1)
    #expect(occurrences("a-long-field-name") == 1)
    #expect(occurrences("other-field") == 1)
    #expect(try ReplicaState.decode(state.computedFields).get() == state)
  }

  /// The issue's measure: 300 starred articles, stored compressed, within 1.2× of the
  /// JSON + DEFLATE blob of the same articles (it was 3.4× as property lists).
  @Test func threeHundredStarredArticlesCompressedAreWithinATenthOrSoOfJSONAndDeflate() throws {
    let articles = Self.articles(300, seed: 35)
    let handRolled = try Deflate.compress(try JSONEncoder().encode(articles))
    let items = try articles.map { try PropertyListValueEncoder.encode($0) }
    let state = Self.state(.set, [("k3f9qa", 4, items)])
    let record = ReplicaRecord(stamp: Stamp(generation: 4, origin: "k3f9qa"), state: state).encoded
    guard case .compressed(let envelope, _, let stored) = CompressedRecord.compress(record) else {
      Issue.record("not compressed")
      return
    }
    let handRolledBytes = PropertyListValue.data(handRolled).estimatedBinaryPlistSize
    #expect(Double(stored) <= 1.2 * Double(handRolledBytes), "\(stored) bytes against \(handRolledBytes)")
    guard case .replica(let read) = RemoteState(storeValue: envelope) else {
      Issue.record("the envelope does not read back")
      return
    }
    #expect(read.state == state)
  }

  @Test func everyTruncationAndCorruptionGivesAReasonNeverACrash() throws {
    let items = try Self.articles(6, seed: 3).map { try PropertyListValueEncoder.encode($0) }
    let state = Self.state(.set, [("a", 2, Array(items.prefix(4))), ("b", 3, Array(items.suffix(3)))])
    let fields = state.computedFields
    let blob = try Self.blob(of: state)
    for length in 0..<blob.count {
      var cut = fields
      cut[3] = .data(blob.prefix(length))
      guard case .failure(let error) = ReplicaState.decode(cut) else {
        Issue.record("a blob cut to \(length) bytes read")
        continue
      }
      #expect(error.reason.hasPrefix("element state "))
    }
    var random = SeededGenerator(seed: 11)
    for _ in 0..<2_000 {
      var bytes = [UInt8](blob)
      for _ in 0..<(1 + Int(random.next() % 3)) {
        bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
      }
      var corrupt = fields
      corrupt[3] = .data(Data(bytes))
      _ = ReplicaState.decode(corrupt)  // a state or a reason, whichever: never a trap
    }
    var extra = fields
    extra[3] = .data(blob + [0])
    #expect(throws: ReplicaDecodingError.self) { try ReplicaState.decode(extra).get() }
  }

  private static let starred = SyncKey<[Article]>("starred", default: [], merge: .set)

  @Test func aCutRecordIsRefusedByNameAndTheLocalValueKept() throws {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: ["starred"])
    let c = harness.device("C", monitored: ["starred"])
    let articles = Self.articles(5, seed: 8)
    a.coordinator[Self.starred] = Array(articles.prefix(3))
    a.settle()
    harness.round()
    let record = try #require(harness.cloud.serverValues["starred"])
    guard case .array(var fields) = record, case .data(let blob) = fields[6] else {
      Issue.record("not a compact record: \(record.logDescription.prefix(200))")
      return
    }
    fields[6] = .data(blob.dropLast(3))
    harness.cloud.setServerValue(.array(fields), forKey: "starred")
    harness.cloud.download(to: "B")
    harness.cloud.download(to: "C")
    b.settle()
    c.settle()
    // B and C keep their values and log why (and push them again: absence is no delete).
    #expect(b.coordinator[Self.starred] == Array(articles.prefix(3)))
    #expect(b.warnings.contains { $0.contains("starred") && $0.contains("element state") })
    #expect(c.coordinator[Self.starred] == Array(articles.prefix(3)))
    #expect(c.warnings.contains { $0.contains("starred") && $0.contains("element state") })
    // D, a new device with nothing to push, names the key in status.
    harness.cloud.setServerValue(.array(fields), forKey: "starred")
    let d = harness.device("D", monitored: ["starred"])
    d.coordinator.sync()
    d.settle()
    guard case .malformedRecord(let reason)? = d.coordinator.status.refusedKeys["starred"] else {
      Issue.record("D's status: \(d.coordinator.status.refusedKeys)")
      return
    }
    #expect(reason.contains("element state"))
    #expect(d.value("starred") == nil)
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A starred article, as an RSS reader keeps a few hundred of them: short keys, small values.
struct Starred: Codable, SyncValue, Equatable {
  var i: Int
  var t: String
  var u: String
  var d: Date
}

/// Keys stored compressed (`compressed: true`, `SyncConfiguration.compressedKeys`): the
/// store holds a smaller record, `UserDefaults` the plain value, and every device reads it
/// whatever it declares; bad compressed records are refused, never applied.
struct CompressedKeyTests {
  static let starred = SyncKey<[Starred]>("starred", default: [], compressed: true)
  static let plainStarred = SyncKey<[Starred]>("starred", default: [])
  static let tags = SyncKey<[String]>("tags", default: [], merge: .set, compressed: true)
  static let note = SyncKey<String>("note", default: "", compressed: true)

  /// `count` starred articles, the same on every call.
  static func articles(_ count: Int, from first: Int = 1) -> [Starred] {
    (first..<(first + count)).map { n in
      Starred(
        i: 3_000_000 + n * 37, t: "Article \(n): on syncing small settings",
        u: "https://example.com/feed/\(n % 17)/\(n)", d: Date(timeIntervalSince1970: 1_700_000_000 + Double(n) * 3_600))
    }
  }

  /// The stored form of `articles`, as `UserDefaults` holds it.
  static func plist(_ articles: [Starred]) throws -> PropertyListValue {
    try #require(try articles.propertyList)
  }

  /// The record inside a compressed store value, inflated; `nil` unless the store value
  /// is a `z3` envelope.
  static func inflated(_ storeValue: PropertyListValue?) throws -> PropertyListValue? {
    guard case .array(let fields)? = storeValue, fields.count == 2, fields[0] == .string("z3"),
      case .data(let payload) = fields[1]
    else { return nil }
    let bytes = try Deflate.decompress(payload)
    let decoded = try PropertyListSerialization.propertyList(from: bytes, options: [], format: nil)
    return PropertyListValue(bridging: decoded)
  }

  // MARK: Three devices, three declarations, one value

  @Test(arguments: World.allCases)
  func threeDevicesReadTheSameValueWhateverTheyDeclare(_ world: World) throws {
    let harness = Harness(world: world)
    let typed = harness.device("A")
    let stringKeyed = harness.device("B", monitored: ["starred"]) { $0.compressedKeys = ["starred"] }
    let neither = harness.device("C", monitored: ["starred"])
    let articles = Self.articles(300)

    typed.coordinator[Self.starred] = articles
    typed.settle()
    harness.cloud.deliver()
    let stored = harness.cloud.serverValues["starred"]
    #expect(try Self.inflated(stored) != nil, "A's record is compressed")
    #expect(stringKeyed.value("starred") == (try Self.plist(articles)))
    #expect(neither.value("starred") == (try Self.plist(articles)), "C reads it without declaring it compressed")
    #expect(neither.coordinator[Self.plainStarred] == articles)
    #expect(typed.value("starred") == (try Self.plist(articles)), "UserDefaults keeps the plain value")

    // B edits through plain UserDefaults: its configuration compresses the record.
    let more = Self.articles(310)
    stringKeyed.set(try Self.plist(more), "starred")
    stringKeyed.coordinator.sync()
    harness.cloud.deliver()
    #expect(try Self.inflated(harness.cloud.serverValues["starred"]) != nil, "B's record is compressed")
    #expect(typed.coordinator[Self.starred] == more)
    #expect(neither.coordinator[Self.plainStarred] == more)

    // C declares nothing: its record is plain, and A and B read it as before.
    let fewer = Self.articles(5)
    neither.coordinator[Self.plainStarred] = fewer
    neither.settle()
    harness.cloud.deliver()
    #expect(try Self.inflated(harness.cloud.serverValues["starred"]) == nil, "C's record is plain")
    #expect(neither.record("starred")?.content == .value(try Self.plist(fewer)))
    #expect(typed.coordinator[Self.starred] == fewer)
    #expect(stringKeyed.value("starred") == (try Self.plist(fewer)))
    for device in [typed, stringKeyed, neither] {
      #expect(device.coordinator.status.refusedKeys.isEmpty, "\(device.name)")
    }
  }

  @Test func theStoredRecordIsTheDeflatedPlainRecordAndSmaller() throws {
    let harness = Harness()
    let a = harness.device("A")
    let articles = Self.articles(300)
    a.coordinator[Self.starred] = articles
    a.settle()
    harness.cloud.upload()

    let stored = try #require(harness.cloud.serverValues["starred"])
    let inner = try #require(try Self.inflated(stored))
    let record = SyncRecord(
      generation: try #require(a.record("starred")).generation, origin: "A",
      content: .value(try Self.plist(articles)))
    #expect(inner == record.encoded, "the payload is the plain z1 record, exactly")
    let compressedBytes = SimulatedCloud.binaryPlistSize(of: stored)
    let plainBytes = SimulatedCloud.binaryPlistSize(of: record.encoded)
    #expect(compressedBytes * 2 < plainBytes, "\(compressedBytes) bytes compressed, \(plainBytes) plain")
    #expect(a.debugLines.contains { $0.hasPrefix("push starred g") && $0.contains("compressed") })
  }

  @Test func aRecordCompressionDoesNotShrinkIsStoredPlainAndTheLogSaysSo() throws {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: ["note"])
    a.coordinator[Self.note] = "hi"
    a.settle()
    harness.cloud.deliver()
    #expect(a.record("note")?.content == .value(.string("hi")), "a plain z1 record")
    #expect(b.value("note") == .string("hi"))
    #expect(a.debugLines.contains { $0.contains("note") && $0.contains("stored plain") })
  }

  // MARK: Strategy keys

  @Test func aStrategyKeyIsCompressedAndStillMerges() throws {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B")
    #expect(b.coordinator[Self.tags].isEmpty, "B's first use: monitored from now on")
    b.settle()
    let first = (1...200).map { "https://example.com/tag/\($0)" }
    a.coordinator[Self.tags] = first
    a.settle()
    harness.cloud.deliver()
    #expect(Set(b.coordinator[Self.tags]) == Set(first), "a set: its order is the merge's")
    b.settle()
    // Concurrent adds on both devices, offline from each other.
    a.coordinator.insert("from-a", into: Self.tags)
    b.coordinator.insert("from-b", into: Self.tags)
    a.settle()
    b.settle()
    harness.cloud.upload(from: "A")
    harness.cloud.upload(from: "B")
    harness.cloud.download()
    harness.round()

    let expected = Set(first + ["from-a", "from-b"])
    #expect(Set(a.coordinator[Self.tags]) == expected)
    #expect(Set(b.coordinator[Self.tags]) == expected)
    let inner = try #require(try Self.inflated(harness.cloud.serverValues["tags"]), "the record is compressed")
    guard case .array(let fields) = inner, fields.first == .string("z2") else {
      Issue.record("the payload is not a z2 record: \(inner.logDescription)")
      return
    }
    #expect(a.coordinator.status.refusedKeys.isEmpty)
    #expect(b.coordinator.status.refusedKeys.isEmpty)
  }

  // MARK: Status

  @Test func statusShowsTheBytesOfEachKeysValueAndRecord() throws {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let articles = Self.articles(300)
    a.coordinator[Self.starred] = articles
    a.set(.string("dusk"), "theme")
    a.coordinator.sync()
    harness.cloud.upload()

    let status = a.coordinator.status
    let starred = try #require(status.keySizes.first { $0.key == "starred" })
    let stored = try #require(harness.cloud.serverValues["starred"])
    #expect(starred.isCompressed)
    #expect(starred.recordBytes == stored.estimatedBinaryPlistSize)
    #expect(starred.bytes == PropertyListValue.storeSize(key: "starred", value: stored))
    #expect(starred.valueBytes == (try Self.plist(articles)).estimatedBinaryPlistSize)
    #expect(try #require(starred.valueBytes) > starred.recordBytes * 2)

    let theme = try #require(status.keySizes.first { $0.key == "theme" })
    #expect(!theme.isCompressed)
    #expect(theme.valueBytes == PropertyListValue.string("dusk").estimatedBinaryPlistSize)
    #expect(theme.recordBytes > (theme.valueBytes ?? 0), "a plain record costs a little over its value")
    #expect(status.keySizes.map(\.key) == ["starred", "theme"])
    #expect(status.largestKeys.first == starred)
    #expect(status.description.contains("starred: \(starred.bytes) bytes"))
    #expect(status.description.contains("value \(starred.valueBytes ?? 0) bytes, compressed"))
  }

  // MARK: Across implementations

  /// `["z1", 7, "py", [{"id": n, "title": "Article n"} for n in 1...10]]` as Python writes
  /// it: `plistlib.dumps(record, fmt=plistlib.FMT_BINARY, sort_keys=True)`, then
  /// `zlib.compressobj(9, zlib.DEFLATED, -15)` (raw DEFLATE, the format Apple's
  /// `COMPRESSION_ZLIB` reads and writes). Neither the plist nor the stream is ours.
  static let pythonPayload: [UInt8] = [
    0x4b, 0x2a, 0xc8, 0xc9, 0x2c, 0x2e, 0x31, 0x30, 0x58, 0xc2, 0xc8, 0xc4, 0xcc, 0x12, 0x54, 0x65, 0x28, 0xc0, 0x1e,
    0x54, 0x50, 0xb9, 0x8a, 0x95, 0x8b, 0x57, 0x40, 0x58, 0x4c, 0x52, 0x5a, 0x4e, 0xf1, 0x12, 0x1b, 0x3b, 0x07, 0x67,
    0x50, 0x66, 0x4a, 0x68, 0x49, 0x66, 0x49, 0x4e, 0xaa, 0x00, 0x63, 0xa4, 0x63, 0x51, 0x49, 0x66, 0x72, 0x4e, 0xaa,
    0x82, 0x21, 0x50, 0x86, 0x9b, 0x47, 0x80, 0x09, 0x2e, 0x60, 0x04, 0x14, 0xe0, 0xe3, 0x17, 0x60, 0x86, 0x0b, 0x18,
    0x03, 0x05, 0x04, 0x85, 0x04, 0x58, 0xe0, 0x02, 0x26, 0x40, 0x01, 0x11, 0x51, 0x01, 0x56, 0xb8, 0x80, 0x29, 0x50,
    0x40, 0x5c, 0x42, 0x80, 0x0d, 0x2e, 0x60, 0x06, 0x14, 0x60, 0x92, 0x82, 0x73, 0xcd, 0x81, 0x5c, 0x19, 0x59, 0x01,
    0x0e, 0xb8, 0x80, 0x05, 0x50, 0x40, 0x5e, 0x41, 0x80, 0x13, 0x2e, 0x60, 0x09, 0x14, 0x50, 0x52, 0x16, 0xe0, 0x8a,
    0x82, 0x3b, 0xcb, 0x80, 0x83, 0x57, 0x40, 0x48, 0x54, 0x41, 0x55, 0x43, 0xcf, 0xc0, 0xca, 0xde, 0xd1, 0x3b, 0x20,
    0x28, 0x26, 0x31, 0x39, 0xb7, 0xa8, 0xa4, 0xae, 0xb9, 0xb5, 0x7f, 0xca, 0xbc, 0xc5, 0x4b, 0xd7, 0x6f, 0xd9, 0x76,
    0xe0, 0xe8, 0x71, 0x06, 0x30, 0x60, 0x64, 0x84, 0xd0, 0x0c, 0x2a, 0x0c, 0xa8, 0xe0, 0x12, 0x00,
  ]

  @Test func aRecordCompressedByAnotherImplementationIsRead() {
    let expected = PropertyListValue.array(
      (1...10).map { .dictionary(["id": .integer(Int64($0)), "title": .string("Article \($0)")]) })
    let envelope = PropertyListValue.array([.string("z3"), .data(Data(Self.pythonPayload))])
    guard case .record(let record) = RemoteState(storeValue: envelope) else {
      Issue.record("not read as a record: \(RemoteState(storeValue: envelope))")
      return
    }
    #expect(record.stamp == Stamp(generation: 7, origin: "py"))
    #expect(record.content == .value(expected))

    let harness = Harness()
    let a = harness.device("A", monitored: ["starred"])
    harness.cloud.setServerValue(envelope, forKey: "starred")
    harness.cloud.download(to: "A")
    #expect(a.value("starred") == expected)
    #expect(a.coordinator.status.refusedKeys.isEmpty)
  }

  @Test func ourEnvelopeRoundTripsEveryRecordShape() throws {
    let value = try Self.plist(Self.articles(40))
    let dot = Stamp(generation: 4, origin: "b7d2mx.x1")
    var context = VersionVector()
    context.include(dot)
    let state = ReplicaState(kind: .set, groups: [dot: [.string("a"), .string("b")]], context: context)
    let records: [PropertyListValue] = [
      SyncRecord(generation: 9, origin: "k3f9qa", content: .value(value)).encoded,
      ReplicaRecord(stamp: dot, state: state).encoded,
    ]
    for record in records {
      let envelope = try #require(CompressedRecord.envelope(of: record))
      #expect(try Self.inflated(envelope) == record)
      #expect(RemoteState(storeValue: envelope) == RemoteState(storeValue: record))
    }
  }

  // MARK: Bad input

  /// Compressed store values that cannot be read, by name.
  static let unreadable: [(String, @Sendable () throws -> PropertyListValue)] = [
    ("corrupt bytes", { .array([.string("z3"), .data(Data([0xff, 0x13, 0x37, 0x00, 0x42, 0x99, 0x01]))]) }),
    (
      "truncated stream",
      {
        let stream = try Deflate.compress(Data(String(repeating: "bplist00 starred ", count: 50).utf8))
        return .array([.string("z3"), .data(stream.prefix(stream.count / 2))])
      }
    ),
    (
      "inflates past 1 MB",
      {
        // A real record, of a value too large for the store: 1.2 MB of zeros.
        let record = SyncRecord(generation: 3, origin: "x", content: .value(.data(Data(count: 1_200_000)))).encoded
        let plist = try PropertyListSerialization.data(
          fromPropertyList: record.foundationValue, format: .binary, options: 0)
        return .array([.string("z3"), .data(try Deflate.compress(plist))])
      }
    ),
    (
      "inflates to a non-plist",
      { .array([.string("z3"), .data(try Deflate.compress(Data("not a property list at all".utf8)))]) }
    ),
    (
      "inflates to a non-record",
      {
        let plist = try PropertyListSerialization.data(fromPropertyList: ["hello"], format: .binary, options: 0)
        return .array([.string("z3"), .data(try Deflate.compress(plist))])
      }
    ),
    ("payload not data", { .array([.string("z3"), .string("eJzLSM3JyQcABiwCFQ==")]) }),
    ("no payload", { .array([.string("z3")]) }),
  ]

  @Test(arguments: unreadable.map(\.0))
  func anUnreadableCompressedRecordIsRefusedAndTheLocalValueKept(_ name: String) throws {
    let make = try #require(Self.unreadable.first { $0.0 == name }?.1)
    let bad = try make()
    let harness = Harness()
    let a = harness.device("A", monitored: ["starred"])
    let local = try Self.plist(Self.articles(20))
    a.set(local, "starred")
    harness.round()

    harness.cloud.setServerValue(bad, forKey: "starred")
    harness.cloud.download(to: "A")
    #expect(a.value("starred") == local, "the local value is untouched")
    guard case .unreadableCompressedRecord(let reason)? = a.coordinator.status.refusedKeys["starred"] else {
      Issue.record("status says \(a.coordinator.status.refusedKeys["starred"].map { "\($0)" } ?? "nothing")")
      return
    }
    #expect(a.warnings.contains { $0.contains("starred") && $0.contains(reason) }, "the reason is logged")
    #expect(
      a.coordinator.status.description.contains("starred: compressed record in store cannot be read (\(reason))"))

    // Like a malformed record, it reads as absent: the next sync republishes the value.
    a.coordinator.sync()
    harness.cloud.upload()
    #expect(a.value("starred") == local)
    #expect(a.record("starred")?.content == .value(local), "the store is repaired")
    a.coordinator.sync()
    #expect(a.coordinator.status.refusedKeys["starred"] == nil)
  }

  @Test func theRefusalNamesWhatWentWrong() throws {
    func reason(_ value: PropertyListValue) -> String? {
      if case .unreadableCompressed(let reason) = RemoteState(storeValue: value) { reason } else { nil }
    }
    let corrupt = PropertyListValue.array([.string("z3"), .data(Data([0xff, 0xff, 0xff]))])
    #expect(reason(corrupt)?.contains("not a raw DEFLATE stream") == true)
    let bomb = try Deflate.compress(Data(count: 2_000_000))
    #expect(reason(.array([.string("z3"), .data(bomb)]))?.contains("more than \(Deflate.storeLimit) bytes") == true)
    let text = try Deflate.compress(Data("plain text".utf8))
    #expect(reason(.array([.string("z3"), .data(text)]))?.contains("not a binary property list") == true)
  }

  @Test func aCompressedRecordInsideACompressedRecordIsRefused() throws {
    let record = SyncRecord(generation: 2, origin: "x", content: .value(.string("v"))).encoded
    let once = try #require(CompressedRecord.envelope(of: record))
    let twice = try #require(CompressedRecord.envelope(of: once))
    guard case .unreadableCompressed = RemoteState(storeValue: twice) else {
      Issue.record("a nested envelope reads as \(RemoteState(storeValue: twice))")
      return
    }
  }

  @Test func aNewerFormatInsideTheEnvelopeIsLeftAlone() throws {
    let future = PropertyListValue.array([.string("z9"), .integer(4), .string("x"), .string("v")])
    let envelope = try #require(CompressedRecord.envelope(of: future))
    #expect(RemoteState(storeValue: envelope) == .unsupported(version: "z9"))
  }
}

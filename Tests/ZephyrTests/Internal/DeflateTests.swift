import Foundation
import Testing

@testable import Zephyr

/// The raw DEFLATE adapter: the same stream format on every platform, and a clean refusal
/// of anything that is not one.
struct DeflateTests {
  /// `"Zephyr syncs UserDefaults through the iCloud key-value store. "` four times, as
  /// Python's zlib compresses it: `zlib.compressobj(9, zlib.DEFLATED, -15)` (raw DEFLATE,
  /// no zlib header or checksum). Decoding bytes made by another implementation is what
  /// proves the format is the one every platform reads.
  static let pythonStream: [UInt8] = [
    0x8b, 0x4a, 0x2d, 0xc8, 0xa8, 0x2c, 0x52, 0x28, 0xae, 0xcc, 0x4b, 0x2e, 0x56, 0x08, 0x2d, 0x4e, 0x2d, 0x72, 0x49,
    0x4d, 0x4b, 0x2c, 0xcd, 0x29, 0x29, 0x56, 0x28, 0xc9, 0x28, 0xca, 0x2f, 0x4d, 0xcf, 0x00, 0xd2, 0xa9, 0x0a, 0x99,
    0xce, 0x39, 0xf9, 0xa5, 0x29, 0x0a, 0xd9, 0xa9, 0x95, 0xba, 0x65, 0x89, 0x39, 0xa5, 0xa9, 0x0a, 0xc5, 0x25, 0xf9,
    0x45, 0xa9, 0x7a, 0x0a, 0x51, 0x43, 0x56, 0x37, 0x00,
  ]
  static let pythonText = String(repeating: "Zephyr syncs UserDefaults through the iCloud key-value store. ", count: 4)

  @Test func decodesAStreamMadeByAnotherImplementation() throws {
    let text = try Deflate.decompress(Data(Self.pythonStream), limit: 1_000)
    #expect(String(decoding: text, as: UTF8.self) == Self.pythonText)
  }

  @Test func decodesAStoredBlockAndTheEmptyStream() throws {
    // zlib.compressobj(0, zlib.DEFLATED, -15) of "hello": one uncompressed (stored) block.
    let stored: [UInt8] = [0x01, 0x05, 0x00, 0xfa, 0xff, 0x68, 0x65, 0x6c, 0x6c, 0x6f]
    #expect(try Deflate.decompress(Data(stored), limit: 100) == Data("hello".utf8))
    // The empty input, compressed: one empty final block with fixed codes.
    #expect(try Deflate.decompress(Data([0x03, 0x00]), limit: 100) == Data())
  }

  @Test(arguments: [0, 1, 100, 5_000, 200_000])
  func randomBytesRoundTrip(_ count: Int) throws {
    var generator = SeededGenerator(seed: UInt64(count) &+ 19)
    let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    let compressed = try Deflate.compress(data)
    #expect(try Deflate.decompress(compressed, limit: count) == data)
  }

  @Test func compressibleDataShrinksAndRoundTrips() throws {
    let data = Data(String(repeating: "{\"id\":42,\"title\":\"Starred\"},", count: 3_000).utf8)
    let compressed = try Deflate.compress(data)
    #expect(compressed.count * 20 < data.count)
    #expect(try Deflate.decompress(compressed, limit: data.count) == data)
  }

  @Test func ourStreamRoundTripsTheReferenceText() throws {
    let data = Data(Self.pythonText.utf8)
    #expect(try Deflate.decompress(Deflate.compress(data), limit: data.count) == data)
  }

  @Test func outputOverTheLimitIsRefused() throws {
    let data = Data(repeating: 7, count: 300_000)
    let compressed = try Deflate.compress(data)
    #expect(throws: Deflate.Failure.tooLarge(limit: 299_999)) {
      try Deflate.decompress(compressed, limit: 299_999)
    }
    #expect(try Deflate.decompress(compressed, limit: 300_000) == data)
  }

  @Test func aStreamExpandingPastTheStoreLimitIsRefused() throws {
    // 20 MB of zeros compresses to ~20 KB: a "zip bomb" for a 1 MB store.
    let bomb = try Deflate.compress(Data(count: 20_000_000))
    #expect(bomb.count < 100_000)
    #expect(throws: Deflate.Failure.tooLarge(limit: Deflate.storeLimit)) {
      try Deflate.decompress(bomb)
    }
  }

  @Test func truncatedStreamsAreCorrupt() throws {
    let stream = Data(Self.pythonStream)
    for length in [0, 1, 10, stream.count / 2, stream.count - 1] {
      #expect(throws: Deflate.Failure.corrupt, "\(length) bytes") {
        try Deflate.decompress(stream.prefix(length), limit: 1_000)
      }
    }
  }

  @Test func trailingBytesAfterTheStreamAreCorrupt() throws {
    #expect(throws: Deflate.Failure.corrupt) {
      try Deflate.decompress(Data(Self.pythonStream) + Data([0x00, 0x01]), limit: 1_000)
    }
  }

  @Test func garbageIsCorrupt() throws {
    // 0xff: final block, reserved block type 3, which no DEFLATE stream uses.
    #expect(throws: Deflate.Failure.corrupt) { try Deflate.decompress(Data([0xff, 0xff, 0xff]), limit: 1_000) }
    var generator = SeededGenerator(seed: 7)
    var refused = 0
    for _ in 0..<200 {
      let garbage = Data((0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) })
      do { _ = try Deflate.decompress(garbage, limit: 1_000) } catch { refused += 1 }
    }
    #expect(refused > 150)
  }

  @Test func flippedBitsNeverCrash() throws {
    let stream = Data(Self.pythonStream)
    for index in stream.indices {
      var damaged = stream
      damaged[index] ^= 0x10
      // Either a clean refusal or some output within the limit; never a crash or a hang.
      if let output = try? Deflate.decompress(damaged, limit: 1_000) { #expect(output.count <= 1_000) }
    }
  }
}

import Foundation
import Testing

@testable import Zephyr

/// The ledger writes values (a strategy key's merge state above all) as ``ValueWriter``
/// writes them, read back exactly, without a round trip through `PropertyListSerialization`
/// (which on Linux copies every `Data` byte by byte, and dominated an inbound change of a
/// 25,000-id set).
struct LedgerValueCodecTests {
  private static func written(_ value: PropertyListValue?) -> [UInt8] {
    var bytes: [UInt8] = []
    LedgerCodec.appendValue(value, to: &bytes)
    return bytes
  }

  private static func read(_ bytes: [UInt8]) throws(LedgerError) -> PropertyListValue? {
    var reader = ByteReader(bytes: bytes, position: 0)
    let value = try reader.value()
    guard reader.isAtEnd else { throw LedgerError.corrupt("trailing bytes") }
    return value
  }

  private static let edges: [PropertyListValue] = [
    .string(""), .string("é☾\u{0}x"), .integer(.min), .integer(.max), .integer(0), .integer(-1),
    .unsignedInteger(.max), .double(-0.0), .double(.infinity), .double(.leastNonzeroMagnitude),
    .bool(true), .bool(false), .date(Date(timeIntervalSince1970: 1_700_000_000.123_456)),
    .date(.distantPast), .data(Data()), .data(Data((0..<300).map { UInt8($0 % 256) })), .array([]),
    .dictionary([:]), .dictionary(["": .array([.integer(1), .dictionary(["a": .data(Data([7]))])])]),
  ]

  @Test func valuesAreWrittenInTheLedgersOwnFormat() throws {
    let state: PropertyListValue = .array([.string("z3"), .data(Data([1, 2, 3])), .integer(4)])
    let bytes = Self.written(state)
    #expect(bytes.first == 2, "marker 2: the ledger's own encoding, not a binary property list")
    #expect(try Self.read(bytes) == state)
    #expect(Self.written(nil) == [0])
    #expect(try Self.read([0]) == nil)
  }

  @Test func everyValueReadsBackExactly() throws {
    for value in Self.edges { #expect(try Self.read(Self.written(value)) == value, "\(value)") }
    var generator = SeededGenerator(seed: 0x1ED6_E4C0)
    for _ in 0..<500 {
      let value = RandomValues.value(using: &generator)
      #expect(try Self.read(Self.written(value)) == value)
    }
  }

  /// Every cut of a value's bytes is refused, never read as a shorter value, and never a
  /// crash; so is a kind byte nobody wrote and a nesting past the limit.
  @Test func damagedValuesAreRefused() {
    let value: PropertyListValue = .array(Self.edges)
    let bytes = Self.written(value)
    for length in 0..<bytes.count {
      #expect(throws: LedgerError.self, "cut at \(length)") { try Self.read(Array(bytes.prefix(length))) }
    }
    #expect(throws: LedgerError.self) { try Self.read([2, 0xEE]) }
    #expect(throws: LedgerError.self, "a value marker nobody writes") { try Self.read([1, 0]) }
    #expect(throws: LedgerError.self) { try Self.read([9]) }
    let array = ValueTag.array.rawValue
    // An array claiming more elements than bytes remain.
    #expect(throws: LedgerError.self) { try Self.read([2, array, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]) }
    // Nested arrays far past any state's depth: refused, not a stack overflow.
    // (Each an array of one element.)
    func nested(_ depth: Int) -> [UInt8] { [2] + Array(repeating: [array, 1], count: depth).joined() + [array, 0] }
    #expect(throws: Never.self) { try Self.read(nested(60)) }
    #expect(throws: LedgerError.self) { try Self.read(nested(100_000)) }
  }
}

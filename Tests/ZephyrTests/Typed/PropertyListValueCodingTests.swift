import Foundation
import Testing

@testable import Zephyr

/// Codable values go straight to and from ``PropertyListValue``, exactly as
/// `PropertyListEncoder` and `PropertyListSerialization` shape them (so devices on either
/// path store the same value), and read back what either wrote.
struct PropertyListValueCodingTests {
  enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case polygon([Int8], closed: Bool)
    case empty
  }

  class Base: Codable {
    var id: UInt64 = .max
  }

  final class Derived: Base, @unchecked Sendable {
    var label = "d"

    enum CodingKeys: String, CodingKey { case label }

    override init() {
      super.init()
    }

    required init(from decoder: any Decoder) throws {
      label = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .label)
      try super.init(from: decoder.container(keyedBy: CodingKeys.self).superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(label, forKey: .label)
      try super.encode(to: container.superEncoder())
    }
  }

  struct Everything: Codable, Equatable {
    var text = "é☾"
    var optional: String? = nil
    var present: Int? = 3
    var flags: [Bool?] = [true, nil, false]
    var small: Int8 = -128
    var wide: UInt64 = .max
    var signed: Int64 = .min
    var float: Float = 0.1
    var double = Double.pi
    var date = Date(timeIntervalSince1970: 1_700_000_000.5)
    var data = Data([0, 1, 255])
    var url = URL(string: "https://example.com/a?b=c")
    var uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    var byNumber: [Int: String] = [1: "one", -2: "minus two"]
    var byName: [String: [Double]] = ["a": [1, 2.5], "": []]
    var shapes: [Shape] = [.circle(radius: 2), .polygon([1, -1], closed: true), .empty]
    var nested: [[String: Date?]] = [["x": nil, "y": Date(timeIntervalSince1970: 0)]]
  }

  struct Empty: Codable, Equatable {}

  /// What `PropertyListEncoder` and `PropertyListSerialization` make of `value`.
  static func viaFoundation(_ value: some Encodable) throws -> PropertyListValue {
    let encoder = PropertyListEncoder()
    encoder.outputFormat = .binary
    let decoded = try PropertyListSerialization.propertyList(from: encoder.encode([value]), options: [], format: nil)
    guard case .array(let items)? = PropertyListValue(bridging: decoded), items.count == 1 else {
      throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "no value"))
    }
    return items[0]
  }

  @Test func everyShapeEncodesAsPropertyListEncoderDoes() throws {
    let samples: [any Encodable] = [
      Everything(), Empty(), Shape.polygon([], closed: false), [Everything(), Everything()], Derived(), 7, "s",
      [UInt64.max], Date(timeIntervalSince1970: 12), Data(), [String: Int](),
    ]
    for sample in samples {
      let direct = try PropertyListValueEncoder.encode(sample)
      let reference = try Self.viaFoundation(sample)
      #expect(direct == reference, "\(type(of: sample))")
    }
  }

  @Test func valuesReadBackFromEitherEncoding() throws {
    let value = Everything()
    #expect(try PropertyListValueDecoder.decode(Everything.self, from: PropertyListValueEncoder.encode(value)) == value)
    let reference = try PropertyListValueDecoder.decode(Everything.self, from: Self.viaFoundation(value))
    #expect(reference.text == value.text && reference.flags == value.flags && reference.shapes == value.shapes)
    #expect(reference.wide == .max && reference.float == value.float && reference.byNumber == value.byNumber)
    let derived = try PropertyListValueDecoder.decode(Derived.self, from: PropertyListValueEncoder.encode(Derived()))
    #expect(derived.label == "d" && derived.id == .max)
    #expect(try PropertyListValueDecoder.decode(Empty.self, from: .dictionary([:])) == Empty())
  }

  @Test func numbersDecodeAsAnyTypeThatHoldsThemExactly() throws {
    #expect(try PropertyListValueDecoder.decode(Int8.self, from: .integer(-128)) == -128)
    #expect(try PropertyListValueDecoder.decode(Double.self, from: .integer(3)) == 3)
    #expect(try PropertyListValueDecoder.decode(Int.self, from: .double(4)) == 4)
    #expect(try PropertyListValueDecoder.decode(UInt64.self, from: .unsignedInteger(.max)) == .max)
    #expect(throws: DecodingError.self) { try PropertyListValueDecoder.decode(Int8.self, from: .integer(128)) }
    #expect(throws: DecodingError.self) { try PropertyListValueDecoder.decode(Int.self, from: .double(4.5)) }
    #expect(throws: DecodingError.self) { try PropertyListValueDecoder.decode(UInt.self, from: .integer(-1)) }
  }

  @Test func wrongShapesThrowDecodingErrors() {
    #expect(throws: DecodingError.self) { try PropertyListValueDecoder.decode(Everything.self, from: .array([])) }
    #expect(throws: DecodingError.self) { try PropertyListValueDecoder.decode(Everything.self, from: .dictionary([:])) }
    #expect(throws: DecodingError.self) {
      try PropertyListValueDecoder.decode([Int].self, from: .array([.string("x")]))
    }
    #expect(throws: DecodingError.self) { try PropertyListValueDecoder.decode(Date.self, from: .double(0)) }
    #expect(throws: DecodingError.self) { try PropertyListValueDecoder.decode(Data.self, from: .string("")) }
    #expect(throws: DecodingError.self) { try PropertyListValueDecoder.decode(Shape.self, from: .string("circle")) }
  }

  /// Random nested values survive encoding and decoding unchanged, and encode as the
  /// Foundation path does.
  @Test func randomValuesRoundTrip() throws {
    var generator = SeededGenerator(seed: 0xC0DA_B1E)
    for _ in 0..<200 {
      let value: [String: [Int64?]] = Dictionary(
        uniqueKeysWithValues: (0..<Int.random(in: 0..<6, using: &generator)).map { key in
          (
            "k\(key)",
            (0..<Int.random(in: 0..<5, using: &generator)).map { _ in
              Bool.random(using: &generator) ? nil : Int64.random(in: .min ... .max, using: &generator)
            }
          )
        })
      let direct = try PropertyListValueEncoder.encode(value)
      #expect(direct == (try Self.viaFoundation(value)))
      #expect(try PropertyListValueDecoder.decode([String: [Int64?]].self, from: direct) == value)
    }
  }
}

/// Shapes at the edges of `Codable`: containers asked for twice, `super` decoders over
/// missing keys, numbers that a type cannot hold exactly, `"$null"` where a value is
/// expected. The direct coders give what Foundation's give, and refuse what they refuse.
struct PropertyListValueCodingEdgeTests {
  enum Keys: String, CodingKey { case a, b, c }

  /// Fills the nested container of `a` twice, as helpers called one after another do.
  struct TwiceNested: Encodable {
    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: Keys.self)
      var first = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
      try first.encode(1, forKey: .b)
      var second = container.nestedContainer(keyedBy: Keys.self, forKey: .a)
      try second.encode(2, forKey: .c)
    }
  }

  struct TwiceUnkeyed: Encodable {
    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: Keys.self)
      var first = container.nestedUnkeyedContainer(forKey: .a)
      try first.encode(1)
      var second = container.nestedUnkeyedContainer(forKey: .a)
      try second.encode(2)
    }
  }

  /// Reads `a` through a `super` decoder: `nil` when `a` is missing.
  struct SuperOfMissingKey: Decodable, Equatable {
    var a: Int?
    init(from decoder: any Decoder) throws {
      a = try Int?(from: decoder.container(keyedBy: Keys.self).superDecoder(forKey: .a))
    }
  }

  struct SuperOfMissingSuper: Decodable {
    init(from decoder: any Decoder) throws {
      _ = try Int(from: decoder.container(keyedBy: Keys.self).superDecoder())
    }
  }

  struct NilPastTheEnd: Decodable {
    init(from decoder: any Decoder) throws {
      var container = try decoder.unkeyedContainer()
      _ = try container.decodeNil()
    }
  }

  /// What `PropertyListDecoder` makes of `value` as a `Value`: the value, or `nil` for a throw.
  static func viaFoundation<Value: Decodable>(_ type: Value.Type, _ value: PropertyListValue) -> Value? {
    guard
      let data = try? PropertyListSerialization.data(
        fromPropertyList: [value.foundationValue], format: .binary, options: 0)
    else { return nil }
    return (try? PropertyListDecoder().decode([Value].self, from: data))?.first
  }

  static func direct<Value: Decodable>(_ type: Value.Type, _ value: PropertyListValue) -> Value? {
    try? PropertyListValueDecoder.decode(type, from: value)
  }

  @Test func aNestedContainerAskedForTwiceIsOneContainer() throws {
    let nested = try PropertyListValueEncoder.encode(TwiceNested())
    #expect(nested == .dictionary(["a": .dictionary(["b": .integer(1), "c": .integer(2)])]))
    #expect(nested == (try PropertyListValueCodingTests.viaFoundation(TwiceNested())))
    let unkeyed = try PropertyListValueEncoder.encode(TwiceUnkeyed())
    #expect(unkeyed == .dictionary(["a": .array([.integer(1), .integer(2)])]))
    #expect(unkeyed == (try PropertyListValueCodingTests.viaFoundation(TwiceUnkeyed())))
  }

  @Test func decodingAcceptsExactlyWhatPropertyListDecoderAccepts() {
    let null = PropertyListValue.string(PropertyListValueEncoder.null)
    func same<Value: Decodable & Equatable>(_ type: Value.Type, _ value: PropertyListValue) {
      let (direct, reference) = (Self.direct(type, value), Self.viaFoundation(type, value))
      #expect(
        direct == reference, "\(type) from \(value): \(String(describing: direct)) vs \(String(describing: reference))")
    }
    same(Float.self, .double(0.1))
    same(Float.self, .double(1e300))
    same(Float.self, .double(Double(Float(0.1))))
    same(Float.self, .integer(3))
    same(Int.self, .double(3))
    same(Int.self, .double(3.5))
    same(Double.self, .integer(3))
    same(Double.self, .integer(.max))
    same(Float.self, .integer(16_777_217))
    same(Float.self, .integer(.max))
    same(Double.self, .unsignedInteger(.max))
    same(UInt64.self, .double(1e19))
    same(Int64.self, .unsignedInteger(.max))
    same(Int8.self, .integer(128))
    same(Bool.self, .integer(1))
    same(Bool.self, .bool(true))
    same(String.self, null)
    same([String].self, .array([null]))
    same([String?].self, .array([null, .string("x")]))
    same([String: String].self, .dictionary(["a": null]))
    same(SuperOfMissingKey.self, .dictionary([:]))
    same(SuperOfMissingKey.self, .dictionary(["a": .integer(4)]))
    #expect(Self.direct(SuperOfMissingSuper.self, .dictionary([:])) == nil)
    #expect(Self.viaFoundation(SuperOfMissingSuper.self, .dictionary([:])) == nil)
    #expect(Self.direct(NilPastTheEnd.self, .array([])) == nil)
    #expect(Self.viaFoundation(NilPastTheEnd.self, .array([])) == nil)
  }
}

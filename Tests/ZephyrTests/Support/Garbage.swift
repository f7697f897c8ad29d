import Foundation

@testable import Zephyr

/// Bad store values for fuzzing, and what the record format (MergeSemantics.md,
/// "Records") says each one is.
enum Garbage {
  /// What a store value is, by the record format, decided here on its own
  /// (not by calling the engine's decoder) so that the two can disagree.
  enum Kind: Equatable, CustomStringConvertible {
    /// Not record-shaped: a foreign write, pulled as a newer value.
    case foreign
    /// A record of format 1 that breaks a rule; treated as absent and reported.
    case malformed
    /// A record tag of another format version; left alone and reported.
    case unsupported(tag: String)
    /// A valid record.
    case record(value: PropertyListValue?)
    /// A record of a strategy key's state (`z2`): valid (merged by its strategy, or refused
    /// when the strategy cannot merge the local value), or malformed; its rules are
    /// checked by ReplicaStateTests.
    case state
    /// A compressed record (`z3`): unreadable, or whatever the record inside is; its
    /// rules are checked by CompressedKeyTests.
    case compressed

    var description: String {
      switch self {
      case .foreign: "foreign"
      case .malformed: "malformed"
      case .unsupported(let tag): "unsupported \(tag)"
      case .record(let value): "record \(value?.logDescription ?? "tombstone")"
      case .state: "state record or malformed"
      case .compressed: "compressed record"
      }
    }
  }

  static let maximumGeneration: Int64 = 1 << 53
  /// The largest generation a fuzzed device believes: its agreed generations stay small,
  /// and a record more than 2^40 above them is refused as forged.
  static let believableGeneration: Int64 = 1 << 40

  /// `["z1", generation, origin, value]` and `["z1d", generation, origin, date]`, with
  /// the name of a foreign value it was made over (an integer in 0...2^32 − 1), or an
  /// array of 2 to 4 of them, as an optional fifth field, then the writer's sent time (6 bytes of data): the tag is `z`,
  /// one to six ASCII digits (the format version) and `d` for a tombstone; the generation
  /// an integer in 1...2^40 (believable); the origin a string of 1...64 characters.
  static func kind(of value: PropertyListValue) -> Kind {
    guard case .array(var fields) = value, case .string(let tag)? = fields.first,
      let version = version(ofTag: tag)
    else { return .foreign }
    if version == 2, tag == "z2" { return .state }
    if version == 3, tag == "z3" { return .compressed }
    guard version == 1 else { return .unsupported(tag: tag) }
    if SentTime.carries(fields) { fields.removeLast() }
    if fields.count == 5 {
      let names: [PropertyListValue]
      switch fields[4] {
      case .array(let several) where (2...4).contains(several.count): names = several
      case .array: return .malformed
      case let one: names = [one]
      }
      for name in names {
        guard case .integer(let raw) = name, (0...Int64(UInt32.max)).contains(raw) else { return .malformed }
      }
      fields.removeLast()
    }
    guard fields.count == 4 else { return .malformed }
    guard case .integer(let generation) = fields[1], (1...believableGeneration).contains(generation) else {
      return .malformed
    }
    guard case .string(let origin) = fields[2], (1...64).contains(origin.count) else { return .malformed }
    if tag.hasSuffix("d") {
      guard case .date = fields[3] else { return .malformed }
      return .record(value: nil)
    }
    return .record(value: fields[3])
  }

  /// The second field of an array, when it is an integer.
  static func generation(of value: PropertyListValue) -> Int64? {
    guard case .array(let fields) = value, fields.count > 1, case .integer(let generation) = fields[1] else {
      return nil
    }
    return generation
  }

  private static func version(ofTag tag: String) -> Int? {
    var body = Substring(tag)
    guard body.first == "z" else { return nil }
    body = body.dropFirst()
    if body.last == "d" { body = body.dropLast() }
    guard (1...6).contains(body.count), body.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
    return Int(body)
  }

  // MARK: Inputs

  static let date = PropertyListValue.date(Date(timeIntervalSince1970: 1_600_000_000))

  /// One value of every property-list type, and a few edge values of each.
  static let typeSamples: [PropertyListValue] = [
    .string("7"), .string(""), .integer(-4), .integer(0), .integer(7), .unsignedInteger(.max), .double(3),
    .double(-0.5), .double(.infinity), .bool(true), .bool(false), date, .data(Data([1, 2])), .data(Data()),
    .array([]), .array([.integer(5)]), .dictionary([:]), .dictionary(["g": .integer(3)]),
  ]

  static let tags = [
    "z1", "z1d", "z2", "z3", "z0", "z99d", "z123456", "z9", "z1dd", "zd", "z", "Z1", "z1x", "z-1", " z1", "z１",
    "z1234567", "", "zz", "z1 ", "y1",
  ]

  static let generations: [PropertyListValue] = [
    .integer(-1), .integer(0), .integer(1), .integer(believableGeneration),
    .integer(maximumGeneration), .integer(maximumGeneration + 1),
    .integer(.max), .integer(.min), .unsignedInteger(1 << 63 + 1),
  ]

  static let origins: [PropertyListValue] = [
    .string(""), .string("a"), .string(String(repeating: "o", count: 64)), .string(String(repeating: "o", count: 65)),
    .string(String(repeating: "é", count: 64)), .string(String(repeating: "é", count: 65)),
  ]

  static func record(
    _ tag: String, _ generation: PropertyListValue = .integer(5), _ origin: PropertyListValue = .string("dev"),
    _ content: PropertyListValue? = nil
  )
    -> PropertyListValue
  {
    .array([.string(tag), generation, origin, content ?? (tag.hasSuffix("d") ? date : .string("v"))])
  }

  /// Every wrong type in every field of both record shapes, every odd tag, generation
  /// and origin, truncated and overlong records, and bare values of every type.
  static var systematic: [PropertyListValue] {
    var inputs: [PropertyListValue] = []
    for tag in ["z1", "z1d"] {
      for sample in typeSamples {
        inputs.append(record(tag, sample))
        inputs.append(record(tag, .integer(5), sample))
        inputs.append(record(tag, .integer(5), .string("dev"), sample))
      }
      for generation in generations { inputs.append(record(tag, generation)) }
      for origin in origins { inputs.append(record(tag, .integer(5), origin)) }
      guard case .array(let fields) = record(tag) else { continue }
      for count in 0..<4 { inputs.append(.array(Array(fields.prefix(count)))) }
      inputs.append(.array(fields + [.string("extra")]))
      inputs.append(.array(fields + fields))
    }
    for tag in tags { inputs.append(record(tag)) }
    for sample in typeSamples {
      inputs.append(.array([sample, .integer(5), .string("dev"), .string("v")]))
      inputs.append(sample)
    }
    // Compressed: each record so far inside an envelope, and envelopes of odd payloads.
    inputs += inputs.compactMap { CompressedRecord.envelope(of: $0) }
    for sample in typeSamples { inputs.append(.array([.string("z3"), sample])) }
    return inputs
  }

  /// A record mutated one to three times: a field replaced by a random value or an odd
  /// one, a field dropped or added, the tag, generation or origin swapped for an odd one.
  static func mutated(using random: inout SeededGenerator) -> PropertyListValue {
    let tag = Bool.random(using: &random) ? "z1" : "z1d"
    guard case .array(var fields) = record(tag, .integer(Int64.random(in: 1...50, using: &random))) else {
      return .string("unreachable")
    }
    for _ in 0..<Int.random(in: 1...3, using: &random) {
      let position = Int.random(in: 0..<max(fields.count, 1), using: &random)
      switch Int.random(in: 0..<8, using: &random) {
      case 0 where !fields.isEmpty: fields[position] = RandomValues.value(using: &random, depth: 1)
      case 1 where !fields.isEmpty: fields[position] = typeSamples.randomElement(using: &random) ?? .bool(true)
      case 2 where !fields.isEmpty: fields.remove(at: position)
      case 3: fields.append(RandomValues.value(using: &random, depth: 2))
      case 4 where !fields.isEmpty: fields[0] = .string(tags.randomElement(using: &random) ?? "z1")
      case 5 where fields.count > 1: fields[1] = generations.randomElement(using: &random) ?? .integer(0)
      case 6 where fields.count > 2: fields[2] = origins.randomElement(using: &random) ?? .string("")
      default: fields.shuffle(using: &random)
      }
    }
    return .array(fields)
  }

  /// An array nested `depth` levels deep around `leaf`.
  static func nested(_ depth: Int, around leaf: PropertyListValue = .integer(1)) -> PropertyListValue {
    (0..<depth).reduce(leaf) { inner, _ in .array([inner]) }
  }

  /// Data of `bytes` bytes: over the 1 MB store limit when `bytes` is.
  static func huge(_ bytes: Int) -> PropertyListValue {
    .data(Data(repeating: 7, count: bytes))
  }
}

import Foundation

@testable import Zephyr

/// A small, fast, seedable generator (SplitMix64), so random tests replay exactly.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) {
    state = seed
  }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }
}

/// Random property-list values of every kind, nested a few levels.
enum RandomValues {
  static func value(using generator: inout SeededGenerator, depth: Int = 0) -> PropertyListValue {
    switch Int.random(in: 0..<(depth >= 2 ? 9 : 11), using: &generator) {
    case 0: return .string(String(repeating: "a", count: Int.random(in: 0..<40, using: &generator)))
    case 1: return .string("é" + String(repeating: "ü☾", count: Int.random(in: 0..<20, using: &generator)))
    case 2: return .integer(Int64.random(in: -1_000...100_000, using: &generator))
    case 3: return .integer(Int64.random(in: 0...10, using: &generator))
    case 4: return .double(Double(Int.random(in: 0..<10_000, using: &generator)) / 8)
    case 5: return .bool(Bool.random(using: &generator))
    case 6: return .date(Date(timeIntervalSince1970: Double(Int.random(in: 0..<2_000_000_000, using: &generator))))
    case 7: return .data(Data(repeating: 1, count: Int.random(in: 0..<300, using: &generator)))
    case 8: return .unsignedInteger(UInt64(Int64.max) + UInt64.random(in: 1...1_000, using: &generator))
    case 9:
      let count = Int.random(in: 0..<20, using: &generator)
      return .array((0..<count).map { _ in value(using: &generator, depth: depth + 1) })
    default:
      let count = Int.random(in: 0..<20, using: &generator)
      var entries: [String: PropertyListValue] = [:]
      for index in 0..<count { entries["k\(index)"] = value(using: &generator, depth: depth + 1) }
      return .dictionary(entries)
    }
  }
}

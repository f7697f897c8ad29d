import Foundation

@testable import Zephyr

/// Keys and value types the typed-key tests share.
enum Theme: String, SyncValue, CaseIterable {
  case light, dark, dusk
}

/// Both `RawRepresentable` and `Codable`: stored as its raw value.
enum Density: Int, Codable, SyncValue {
  case compact = 1
  case comfortable = 2
}

struct Layout: Codable, SyncValue, Equatable {
  var columns: Int
  var title: String
  var pinned: [String]
  var updated: Date?
}

/// Encodes itself as a bare number: a top-level fragment for `PropertyListEncoder`.
struct Celsius: Codable, SyncValue, Equatable {
  var degrees: Double

  init(_ degrees: Double) { self.degrees = degrees }

  init(from decoder: any Decoder) throws {
    degrees = try decoder.singleValueContainer().decode(Double.self)
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(degrees)
  }
}

/// A `Codable` value whose encoding fails for negative numbers, as a type with an
/// invariant its `encode(to:)` checks might.
struct Fragile: Codable, SyncValue, Equatable {
  var number: Int

  init(_ number: Int) { self.number = number }

  init(from decoder: any Decoder) throws {
    number = try decoder.singleValueContainer().decode(Int.self)
  }

  func encode(to encoder: any Encoder) throws {
    guard number >= 0 else {
      throw EncodingError.invalidValue(
        number, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "negative"))
    }
    var container = encoder.singleValueContainer()
    try container.encode(number)
  }
}

enum Keys {
  static let theme = SyncKey<String>("theme", default: "light")
  static let flag = SyncKey<Bool>("flag", default: false)
  static let count = SyncKey<Int>("count", default: 7)
  static let size = SyncKey<Double>("size", default: 14)
  static let opened = SyncKey<Date>("opened", default: Date(timeIntervalSince1970: 0))
  static let blob = SyncKey<Data>("blob", default: Data())
  static let tags = SyncKey<[String]>("tags", default: [])
  static let scores = SyncKey<[String: Int]>("scores", default: [:])
  static let nickname = SyncKey<String?>("nickname")
  static let layout = SyncKey<Layout>("layout", default: Layout(columns: 2, title: "", pinned: []))
  static let mode = SyncKey<Theme>("mode", default: .light)
  static let density = SyncKey<Density>("density", default: .comfortable)
  static let temperature = SyncKey<Celsius>("temperature", default: Celsius(20))
  static let fragile = SyncKey<Fragile>("fragile", default: Fragile(0))
}

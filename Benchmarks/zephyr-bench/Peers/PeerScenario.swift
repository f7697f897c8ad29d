import Foundation
import Zephyr

// The seeded workload every design runs: three devices, four keys, edits, deletes,
// offline devices, relaunches, late and duplicate deliveries, and clocks a few seconds
// apart. The same seed gives the same steps for every design.

/// One step of a peer-comparison scenario.
enum PeerStep: Sendable, Equatable, CustomStringConvertible {
  /// The app writes a new value to a synced key (the value carries the write's id).
  case edit(String, String)
  /// The app removes a synced key (issued on every design; on a device that holds no
  /// value it is a no-op there and makes no write).
  case delete(String, String)
  /// The app calls the design's sync entry point.
  case sync(String)
  /// The device's pending store writes reach the server (skipped while offline).
  case upload(String)
  /// Server → device cache; `notify: false` holds the event back for a later `.late`.
  case download(String, notify: Bool)
  /// The oldest event held back for the device arrives now, after later ones.
  case late(String)
  /// The last event the device received arrives again.
  case duplicate(String)
  /// The device loses (or regains) its connection: no upload, download or event.
  case toggleOnline(String)
  /// The app is relaunched: a new instance of the design over the same local state.
  case relaunch(String)

  var description: String {
    switch self {
    case .edit(let device, let key): "edit(\(device), \(key))"
    case .delete(let device, let key): "delete(\(device), \(key))"
    case .sync(let device): "sync(\(device))"
    case .upload(let device): "upload(\(device))"
    case .download(let device, let notify): "download(\(device), notify: \(notify))"
    case .late(let device): "late(\(device))"
    case .duplicate(let device): "duplicate(\(device))"
    case .toggleOnline(let device): "toggleOnline(\(device))"
    case .relaunch(let device): "relaunch(\(device))"
    }
  }
}

/// A generated scenario: each device's clock offset and the steps, in order.
struct PeerScenario: Sendable, CustomStringConvertible {
  static let devices = ["A", "B", "C"]
  static let keys = ["theme", "font", "layout", "sound"]
  /// Wall-clock time at step 0; every step advances it by one second.
  static let start = Date(timeIntervalSince1970: 1_800_000_000)

  var seed: UInt64
  /// Seconds each device's clock is ahead of (or behind) true time.
  var skews: [String: Double]
  var steps: [PeerStep]

  var description: String {
    let skew = Self.devices.map { "\($0): \(skews[$0] ?? 0)" }.joined(separator: ", ")
    return "PeerScenario(seed: \(seed), skews: [\(skew)], steps: [\n"
      + steps.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n") + "\n])"
  }

  /// The scenario that `seed` generates: 40–80 steps, skews of up to three seconds.
  static func generate(seed: UInt64) -> PeerScenario {
    var random = SplitMix64(seed: seed)
    var skews: [String: Double] = [:]
    for device in devices { skews[device] = Double(Int.random(in: -3...3, using: &random)) }
    let count = Int.random(in: 40...80, using: &random)
    var steps: [PeerStep] = []
    while steps.count < count {
      let device = devices.randomElement(using: &random) ?? "A"
      let key = keys.randomElement(using: &random) ?? "theme"
      switch Int.random(in: 0..<100, using: &random) {
      case 0..<26: steps.append(.edit(device, key))
      case 26..<34: steps.append(.delete(device, key))
      case 34..<44: steps.append(.sync(device))
      case 44..<58: steps.append(.upload(device))
      case 58..<72: steps.append(.download(device, notify: Int.random(in: 0..<4, using: &random) > 0))
      case 72..<77: steps.append(.late(device))
      case 77..<81: steps.append(.duplicate(device))
      case 81..<87: steps.append(.toggleOnline(device))
      case 87..<91: steps.append(.relaunch(device))
      default: steps.append(.download(device, notify: true))
      }
    }
    return PeerScenario(seed: seed, skews: skews, steps: steps)
  }
}

/// The value an edit writes: a string that names the write, so that any copy of it, in a
/// device's defaults or inside a design's store record, says which write it is.
enum PeerValue {
  static func value(writeID: String, step: Int) -> PropertyListValue {
    .string("w:\(writeID):" + String(repeating: "v", count: 8 + step % 24))
  }

  /// The ids of the writes whose values `value` contains, at any depth.
  static func writeIDs(in value: PropertyListValue) -> [String] {
    switch value {
    case .string(let text):
      guard text.hasPrefix("w:") else { return [] }
      return [String(text.dropFirst(2).prefix { $0 != ":" })]
    case .array(let items): return items.flatMap(writeIDs)
    case .dictionary(let entries): return entries.values.flatMap(writeIDs)
    default: return []
    }
  }
}

/// SplitMix64: a small, fast, seedable generator, so that every run draws the same steps.
struct SplitMix64: RandomNumberGenerator {
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

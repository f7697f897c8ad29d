import Foundation

@testable import Zephyr

/// One step of a generated scenario. Steps name devices and keys directly, and print as
/// Swift source, so a shrunk failure can be pasted into a regression test as it is.
enum ScenarioStep: Sendable, Equatable, CustomStringConvertible {
  /// An operation a crash may interrupt.
  enum Operation: Sendable, Equatable, CustomStringConvertible {
    case sync
    case syncKeys([String])
    case download(notify: Bool)
    case notify

    var description: String {
      switch self {
      case .sync: ".sync"
      case .syncKeys(let keys): ".syncKeys(\(keys))"
      case .download(let notify): ".download(notify: \(notify))"
      case .notify: ".notify"
      }
    }
  }

  /// The app writes a new value (payload from `seed`) to a monitored key.
  case set(String, String, seed: UInt64)
  /// The app removes a monitored key.
  case remove(String, String)
  /// `UserDefaults.didChangeNotification` for the device's suite, as Apple posts it;
  /// then wait for the coalesced push.
  case notify(String)
  case sync(String)
  case syncKeys(String, [String])
  /// The device's pending store writes reach the server.
  case upload(String)
  /// Server → device cache, with its event or with the event dropped.
  case download(String, notify: Bool)
  /// An event posted again or out of order: names `keys` (`nil`: all) whatever changed.
  case event(String, keys: [String]?, initialSync: Bool)
  case switchAccount(String, to: String)
  /// An app relaunch: a new coordinator over the same suite, store and ledger.
  case restart(String)
  /// A foreign writer (an old app version) replaces the default account's server value.
  case foreignWrite(String, seed: UInt64)
  /// A foreign writer removes the server value.
  case foreignRemove(String)
  /// Other code writes to the default account's server a value the key's strategy cannot
  /// merge (a string under a collection key): no device takes it (its `status`
  /// names the key), and the next local edit replaces it. Tracked as no write: a device
  /// that took it would hold a value nobody wrote.
  case wrongTypeInStore(String)
  /// More than the tombstone lifetime (30 days) passes on every device's clock: the next
  /// sync of a device that agreed on a deletion collects its tombstone (or its strategy
  /// key's deleted record) from the store. A device that had not seen the deletion and
  /// still holds the value may then upload it again, the documented limit.
  case passTime
  /// The operation crashes before its `before`-th write; the device then restarts.
  case crash(String, before: Int, during: Operation)
  /// Writes `value` straight to the server as no tracked writer: a stand-in for a broken
  /// engine, for the tests that check the checker. Never generated.
  case tamper(String, PropertyListValue)

  var description: String {
    switch self {
    case .set(let device, let key, let seed): ".set(\"\(device)\", \"\(key)\", seed: \(seed))"
    case .remove(let device, let key): ".remove(\"\(device)\", \"\(key)\")"
    case .notify(let device): ".notify(\"\(device)\")"
    case .sync(let device): ".sync(\"\(device)\")"
    case .syncKeys(let device, let keys): ".syncKeys(\"\(device)\", \(keys))"
    case .upload(let device): ".upload(\"\(device)\")"
    case .download(let device, let notify): ".download(\"\(device)\", notify: \(notify))"
    case .event(let device, let keys, let initial):
      ".event(\"\(device)\", keys: \(keys.map { "\($0)" } ?? "nil"), initialSync: \(initial))"
    case .switchAccount(let device, let account): ".switchAccount(\"\(device)\", to: \"\(account)\")"
    case .restart(let device): ".restart(\"\(device)\")"
    case .foreignWrite(let key, let seed): ".foreignWrite(\"\(key)\", seed: \(seed))"
    case .foreignRemove(let key): ".foreignRemove(\"\(key)\")"
    case .wrongTypeInStore(let key): ".wrongTypeInStore(\"\(key)\")"
    case .passTime: ".passTime"
    case .crash(let device, let before, let operation):
      ".crash(\"\(device)\", before: \(before), during: \(operation))"
    case .tamper(let key, let value): ".tamper(\"\(key)\", \(value))"
    }
  }

  /// The device whose local state the step may change, if any.
  var device: String? {
    switch self {
    case .set(let device, _, _), .remove(let device, _), .notify(let device), .sync(let device),
      .syncKeys(let device, _), .download(let device, _), .event(let device, _, _),
      .switchAccount(let device, _), .restart(let device), .crash(let device, _, _):
      device
    case .upload, .foreignWrite, .foreignRemove, .wrongTypeInStore, .passTime, .tamper:
      nil
    }
  }
}

/// A generated scenario: devices, keys, and the steps to run, in order.
struct Scenario: Sendable, CustomStringConvertible {
  static let keys = ["theme", "com.example.size", "k2", "ünï", "n"]
  static let otherAccount = "work"

  /// Which step kinds a scenario draws from.
  struct Flavor: Sendable, Equatable {
    var accountSwitches = false
    var crashes = false
    var foreignWrites = true
    /// Time passes beyond the tombstone lifetime (``ScenarioStep/passTime``).
    var passesTime = false
  }

  var seed: UInt64
  var devices: [String]
  var keys: [String] = Scenario.keys
  var steps: [ScenarioStep]
  /// A device that is a new install: its store has not had iCloud's initial download,
  /// which discards the writes it makes until its first download (Apple: "schedule the
  /// write operations after a delay to give the system time to download the data").
  var newInstall: String?
  /// The device whose app-group suite and store the process `W` shares (an app extension:
  /// its own instance of the suite, its own ledger folder); `W` is then among ``devices``.
  var widgetHost: String?
  /// Keys merged by a strategy; the others are last-writer-wins.
  var strategies: [String: ScenarioStrategy] = [:]

  /// The keys a scenario may give a strategy.
  static let strategyKeys = ["k2", "n"]

  var description: String {
    "Scenario(seed: \(seed), devices: \(devices), steps: [\n"
      + steps.map { "  \($0)," }.joined(separator: "\n") + "\n]"
      + (newInstall.map { ", newInstall: \"\($0)\"" } ?? "")
      + (widgetHost.map { ", widgetHost: \"\($0)\"" } ?? "")
      + (strategies.isEmpty
        ? ""
        : ", strategies: ["
          + strategies.keys.sorted().map { "\"\($0)\": \(strategies[$0] ?? .set)" }
          .joined(separator: ", ") + "]") + ")"
  }

  /// The device names a scenario draws from: up to 24 (`W` is the app extension).
  static let deviceNames = (Array("ABCDEFGHIJKLMNOPQRSTUV") + ["X", "Y"]).map(String.init)

  /// Whether seed `seed` draws many devices (6–24, one seed in ``manyDevicesShare``).
  static func hasManyDevices(seed: UInt64) -> Bool { seed % manyDevicesShare == 7 }
  static let manyDevicesShare: UInt64 = 20

  /// The scenario that seed `seed` generates: 3–5 devices (6–24 for one seed in
  /// ``manyDevicesShare``) and `stepCount` steps (by default 50–150), in the given flavor
  /// (by default one derived from the seed).
  static func generate(seed: UInt64, stepCount: Int? = nil, flavor: Flavor? = nil) -> Scenario {
    var random = SeededGenerator(seed: seed &* 0x2545_F491_4F6C_DD1D &+ 1)
    let flavor =
      flavor
      ?? Flavor(
        accountSwitches: seed % 4 == 1, crashes: seed % 3 == 2, foreignWrites: seed % 5 != 0,
        passesTime: seed % 7 == 3)
    let deviceCount = Int.random(in: 3...5, using: &random)
    var devices = Array(
      deviceNames.prefix(hasManyDevices(seed: seed) ? Int.random(in: 6...24, using: &random) : deviceCount))
    // One scenario in five (without account switches) has an app extension on the first
    // device's app-group suite: the process `W`.
    let widgetHost = seed % 5 == 3 && !flavor.accountSwitches ? devices.first : nil
    if widgetHost != nil { devices.append(ScenarioRunner.widget) }
    let count = stepCount ?? Int.random(in: 50...150, using: &random)
    var accounts = Dictionary(uniqueKeysWithValues: devices.map { ($0, SimulatedAccount.default) })
    var steps: [ScenarioStep] = []
    let keys = Scenario.keys
    // Two scenarios in three merge two of their keys by a strategy, each strategy as often.
    var strategies: [String: ScenarioStrategy] = [:]
    if seed % 3 != 1 {
      var pick = SeededGenerator(seed: seed &+ 0x5EED)
      for key in strategyKeys { strategies[key] = ScenarioStrategy.allCases.randomElement(using: &pick) }
    }
    // Foreign writers (an old app version) write last-writer-wins keys only; other code
    // writes values of the wrong type under collection keys (a string where `.set`,
    // `.union` or `.dictionary` merge arrays or dictionaries; `.max`, `.min` and `.custom`
    // merge any value), each followed by an edit of the key that replaces it.
    let foreignKeys = keys.filter { strategies[$0] == nil }
    let typedKeys = keys.filter { strategies[$0]?.isCollection == true }
    let newInstall = seed % 3 == 0 ? devices.first : nil
    func someKeys() -> [String] {
      keys.filter { _ in Bool.random(using: &random) }
    }
    while steps.count < count {
      let device = devices.randomElement(using: &random) ?? "A"
      let key = keys.randomElement(using: &random) ?? "theme"
      let roll = Int.random(in: 0..<100, using: &random)
      switch roll {
      case 0..<24: steps.append(.set(device, key, seed: random.next() % 1_000_000))
      case 24..<32: steps.append(.remove(device, key))
      case 32..<39: steps.append(.notify(device))
      case 39..<50: steps.append(.sync(device))
      case 50..<55: steps.append(.syncKeys(device, someKeys()))
      case 55..<69: steps.append(.upload(device))
      case 69..<83: steps.append(.download(device, notify: Int.random(in: 0..<4, using: &random) > 0))
      case 83..<89:
        let keys = Bool.random(using: &random) ? someKeys() : nil
        steps.append(.event(device, keys: keys, initialSync: Int.random(in: 0..<5, using: &random) == 0))
      case 89..<92: steps.append(.restart(device))
      case 92..<95 where flavor.foreignWrites:
        let target = foreignKeys.contains(key) ? key : foreignKeys.randomElement(using: &random) ?? key
        let editors = devices.filter { $0 != newInstall && accounts[$0] == .default }
        if roll == 93, typedKeys.contains(key), let editor = editors.randomElement(using: &random) {
          steps += [
            .wrongTypeInStore(key), .set(editor, key, seed: random.next() % 1_000_000), .sync(editor), .upload(editor),
          ]
        } else if roll == 94 {
          steps.append(.foreignRemove(target))
        } else {
          steps.append(.foreignWrite(target, seed: random.next() % 1_000_000))
        }
      case 96..<100 where flavor.passesTime: steps.append(.passTime)
      case 95..<98 where flavor.accountSwitches:
        let target = accounts[device] == .default ? SimulatedAccount.other : .default
        accounts[device] = target
        steps.append(.switchAccount(device, to: target.name))
      case 98..<100 where flavor.crashes:
        let operation: ScenarioStep.Operation =
          switch Int.random(in: 0..<4, using: &random) {
          case 0: .syncKeys(someKeys())
          case 1: .download(notify: true)
          case 2: .notify
          default: .sync
          }
        steps.append(.crash(device, before: Int.random(in: 1...6, using: &random), during: operation))
      default:
        steps.append(.sync(device))
      }
    }
    // One scenario in three has a new install among its devices.
    return Scenario(
      seed: seed, devices: devices, steps: steps, newInstall: newInstall,
      widgetHost: widgetHost, strategies: strategies)
  }
}

/// The two accounts scenarios switch between.
enum SimulatedAccount: Equatable {
  case `default`, other

  var name: String {
    self == .default ? "default" : Scenario.otherAccount
  }
}

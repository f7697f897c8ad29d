// zephyr-demo: two devices keep their UserDefaults equal through a simulated iCloud.
//
// Each device has its own UserDefaults suite, ledger and SyncCoordinator over one
// SimulatedCloud. Nothing runs on a timer: every upload and download below is a step of
// the transcript. Lines starting with "│" are the coordinators' own decision log.

import Foundation
import Zephyr
import ZephyrTesting

/// One device of the demo: a fresh suite, a coordinator and a way to read its values.
final class Device {
  let name: String
  let suiteName: String
  let defaults: UserDefaults
  let coordinator: SyncCoordinator

  /// - Parameter newInstall: Whether the device's store still awaits iCloud's initial
  ///   download (it then keeps no write until its first download).
  init?(name: String, cloud: SimulatedCloud, ledgerDirectory: URL, monitored: [String], newInstall: Bool = false) {
    let suiteName = "zephyr-demo.\(name).\(UUID().uuidString)"
    // Apple's behaviour on every platform: each write posts didChangeNotification at
    // once, so the coordinator pushes an edit as soon as it is made.
    guard let defaults = AppleFaithfulDefaults(suiteName: suiteName) else { return nil }
    let label = name.padding(toLength: 6, withPad: " ", startingAt: 0)
    var configuration = SyncConfiguration(
      deviceID: name.lowercased(), debugEnabled: true,
      logHandler: { message in
        print("    │ \(label) \(message.level == .warning ? "warning: " : "")\(message.text)")
      },
      ledgerDirectory: ledgerDirectory)
    // Records carry their writer's time, so the metrics show how long deliveries took.
    configuration.measuresDeliveryDelay = true
    self.name = name
    self.suiteName = suiteName
    self.defaults = defaults
    coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: cloud.device(name, initiallyDownloaded: !newInstall),
      configuration: configuration)
    coordinator.addKeysToBeMonitored(keys: monitored)
  }

  func set(_ value: Any, _ key: String) {
    print("  \(name): set \(key) = \(PropertyListValue(bridging: value)?.logDescription ?? "\(value)")")
    defaults.set(value, forKey: key)
    coordinator.waitForPendingLocalEdits()  // the push the edit announced, for a readable transcript
  }

  func remove(_ key: String) {
    print("  \(name): remove \(key)")
    defaults.removeObject(forKey: key)  // never set(nil, forKey:): on Linux it never returns
    coordinator.waitForPendingLocalEdits()
  }

  func sync() {
    print("  \(name): sync()")
    coordinator.sync()
  }

  /// The app's values: the suite's persistent domain without Zephyr's bookkeeping keys.
  var values: [String: PropertyListValue] {
    var values: [String: PropertyListValue] = [:]
    for (key, raw) in defaults.persistentDomain(forName: suiteName) ?? [:] where !key.hasPrefix("Zephyr.") {
      values[key] = PropertyListValue(bridging: raw)
    }
    return values
  }

  func show(_ keys: [String]) {
    let shown = keys.map { "\($0) = \(values[$0]?.logDescription ?? "(none)")" }
    print("  → \(name) has " + shown.joined(separator: ", "))
  }
}

/// A store value as a reader would describe it: `["z1", 4, "mac", "dusk"]` → `value g4 "dusk" by mac`.
func describeRecord(_ stored: PropertyListValue?) -> String {
  guard let stored else { return "nothing" }
  guard case .array(let fields) = stored, fields.count == 4, case .string(let tag) = fields[0],
    case .integer(let generation) = fields[1], case .string(let origin) = fields[2]
  else { return "a foreign value \(stored.logDescription)" }
  switch tag {
  case "z1": return "value g\(generation) \(fields[3].logDescription) by \(origin)"
  case "z1d": return "tombstone g\(generation) by \(origin), deleted \(fields[3].logDescription)"
  default: return "a record of unknown format \(tag)"
  }
}

func heading(_ title: String) {
  print("\n== \(title)")
}

/// One round of "deliver; every device syncs; deliver"; returns how many store writes it caused.
func round(_ cloud: SimulatedCloud, _ devices: [Device]) -> Int {
  let writes = { devices.map { cloud.device($0.name).statistics.writes }.reduce(0, +) }
  let before = writes()
  print("  cloud: deliver, both devices sync, deliver")
  cloud.deliver()
  for device in devices { device.coordinator.sync() }
  cloud.deliver()
  return writes() - before
}

func deliver(_ cloud: SimulatedCloud) {
  print("  cloud: deliver")
  cloud.deliver()
}

/// (a) The typed API, the one to start from: keys declared once with their type and
/// default, read and written through a coordinator, and followed with `changes(of:)`.
func typedKeys(_ iPhone: Device, _ mac: Device, _ cloud: SimulatedCloud) {
  heading("(a) Typed keys: each setting declared once, read, written and followed through SyncKey")
  let theme = SyncKey<String>("theme", default: "light")
  let fontSize = SyncKey<Double>("fontSize", default: 14)
  let nickname = SyncKey<String?>("nickname")
  print("  keys: SyncKey<String>(\"theme\", default: \"light\"), SyncKey<Double>(\"fontSize\", default: 14),")
  print("        SyncKey<String?>(\"nickname\")  (default nil)")
  print("  Mac: coordinator[theme] = \"\(mac.coordinator[theme])\" (the key's default: nothing is stored yet)")
  // A first use reconciles the key on the local-edit queue: waited for, for a readable transcript.
  mac.coordinator.waitForPendingLocalEdits()

  // The Mac app follows theme, as a view model would: a loop over changes(of:). It runs
  // in a task; the transcript waits for it rather than sleeping.
  let themes = mac.coordinator.changes(of: theme)
  let loopEnded = DispatchSemaphore(value: 0)
  Task {
    var seen: [String] = []
    for await value in themes {
      seen.append(value)
      if seen.count == 2 { break }  // the value now, then the iPhone's change
    }
    let shown = seen.map { "\"\($0)\"" }.joined(separator: ", then ")
    print("  → the Mac's `for await theme in coordinator.changes(of: theme)` loop saw \(shown)")
    loopEnded.signal()
  }

  print("  iPhone: coordinator[theme] = \"dusk\"; coordinator[fontSize] = 16; coordinator[nickname] = \"kit\"")
  iPhone.coordinator[theme] = "dusk"  // written to UserDefaults now, pushed without reading the domain
  iPhone.coordinator[fontSize] = 16
  iPhone.coordinator[nickname] = "kit"
  iPhone.coordinator.waitForPendingLocalEdits()  // their push (sets in a row share a batch)
  deliver(cloud)
  loopEnded.wait()
  let (macTheme, macFontSize) = (mac.coordinator[theme], mac.coordinator[fontSize])
  mac.coordinator.waitForPendingLocalEdits()
  print(
    "  → Mac: coordinator[theme] = \"\(macTheme)\", coordinator[fontSize] = \(macFontSize); "
      + "plain UserDefaults.string(forKey: \"theme\") = \"\(mac.defaults.string(forKey: "theme") ?? "nil")\"")
  // A key is monitored from its first use: the Mac follows nickname from here on, and its
  // first read reconciles it, pulling the value that arrived before.
  _ = mac.coordinator[nickname]
  mac.coordinator.waitForPendingLocalEdits()
  print("  → Mac: coordinator[nickname] = \(mac.coordinator[nickname].map { "\"\($0)\"" } ?? "nil")")
  print("  iPhone: coordinator[nickname] = nil  (an optional key set to nil is a synced delete)")
  iPhone.coordinator[nickname] = nil
  iPhone.coordinator.waitForPendingLocalEdits()
  deliver(cloud)
  print(
    "  → Mac: coordinator[nickname] = \(mac.coordinator[nickname] ?? "nil"); store: \(describeRecord(cloud.serverValues["nickname"]))"
  )
  RunLoop.main.run(until: Date())  // the Mac's change notifications of this scene go out now
}

/// The string-keyed scenes, on the iPhone and the Mac: the calls Zephyr 5 apps make.
struct StringKeyedScenes {
  let cloud: SimulatedCloud
  let iPhone: Device
  let mac: Device
  var devices: [Device] { [iPhone, mac] }

  func plainEdits() {
    heading("(b) Edits through plain UserDefaults reach the Mac too (string-keyed, as in Zephyr 5)")
    iPhone.set("sepia", "theme")
    iPhone.set(15, "fontSize")
    iPhone.sync()
    let observer = NotificationCenter.default.addObserver(
      forName: Zephyr.keysDidChangeOnCloudNotification, object: mac.coordinator, queue: nil
    ) { note in
      let changed = note.userInfo?[Zephyr.changedKeysUserInfoKey] as? [String] ?? []
      print("  → the Mac app is notified on the main queue: \(changed.joined(separator: ", ")) changed")
    }
    deliver(cloud)
    mac.show(["theme", "fontSize"])
    RunLoop.main.run(until: Date())  // let the main queue post the notification
    NotificationCenter.default.removeObserver(observer)
  }

  func differentKeys() {
    heading("(c) Different keys edited on both devices before either hears from the other")
    iPhone.set(true, "showsBadges")
    mac.set(16, "fontSize")
    iPhone.sync()
    mac.sync()
    deliver(cloud)
    for device in devices { device.show(["fontSize", "showsBadges"]) }
  }

  func conflict() {
    heading("(d) A conflict: both devices change theme at the same time")
    iPhone.set("ocean", "theme")
    mac.set("forest", "theme")
    for device in devices {
      print(
        "  \(device.name)'s store cache: theme = \(describeRecord(cloud.device(device.name).value(forKey: "theme")))")
    }
    deliver(cloud)
    for device in devices { device.show(["theme"]) }
    print("  Why: each edit announced itself and was pushed at the same generation; the server keeps")
    print("  the last write per key, the Mac's. The iPhone had not edited theme since its push, so a")
    print("  different value at the generation it agreed on is news to it: it pulls.")
    print("  → a further round wrote \(round(cloud, devices)) store value(s)")
  }

  /// The iPad joins as a new install; returns it (its coordinator must outlive the scene).
  func newInstall(ledgerDirectory: URL, monitored: [String]) -> Device? {
    heading("(d') A new install's first-launch default never replaces the person's setting")
    guard
      let iPad = Device(
        name: "iPad", cloud: cloud, ledgerDirectory: ledgerDirectory, monitored: monitored, newInstall: true)
    else { return nil }
    print("  The iPad is a new install: iCloud has not downloaded to it yet.")
    iPad.set("light", "theme")  // the app's first-launch default, pushed at once
    print("  cloud: upload (the iPad's write was discarded: its initial download has not happened)")
    cloud.upload()
    print("  cloud: the iPad's initial download")
    cloud.download(to: "iPad")
    iPad.show(["theme"])
    print("  → a round wrote \(round(cloud, devices + [iPad])) store value(s); everyone keeps the person's \"forest\"")
    for device in devices { device.show(["theme"]) }
    return iPad
  }

  func delete() {
    heading("(e) A delete on the Mac propagates as a tombstone")
    mac.remove("showsBadges")
    mac.sync()
    deliver(cloud)
    print("  store: showsBadges = \(describeRecord(cloud.serverValues["showsBadges"]))")
    iPhone.show(["showsBadges"])
    print("  The iPhone syncs again; the delete does not come back.")
    iPhone.sync()
    iPhone.show(["showsBadges"])
  }

  /// Returns the refused key.
  func longKey() -> String {
    heading("(f) A key longer than 64 UTF-8 bytes is refused; other keys still sync")
    let longKey = "com.example.zephyr-demo.reading-position.of-the-most-recently-opened-chapter"
    iPhone.set("value", longKey)
    iPhone.set("library", "lastTab")
    iPhone.sync()
    deliver(cloud)
    for (key, reason) in iPhone.coordinator.status.refusedKeys.sorted(by: { $0.key < $1.key }) {
      print("  iPhone status.refusedKeys: \(key) (\(key.utf8.count) bytes): \(reason)")
    }
    print("  store has the long key: \(cloud.serverValues[longKey] != nil ? "yes" : "no")")
    print("  iPhone keeps its local value: \(iPhone.values[longKey]?.logDescription ?? "(none)")")
    mac.show(["lastTab"])
    return longKey
  }

  /// The final table; returns whether every synced key is equal on both devices.
  func converged(except refused: String) -> Bool {
    heading("Converged values")
    print("  → one more round wrote \(round(cloud, devices)) store value(s)")
    func row(_ key: String, _ left: String, _ right: String) -> String {
      let shortKey = key.count > 24 ? key.prefix(21) + "..." : key
      return "  " + shortKey.padding(toLength: 26, withPad: " ", startingAt: 0)
        + left.padding(toLength: 12, withPad: " ", startingAt: 0) + right
    }
    print(row("key", "iPhone", "Mac"))
    let allKeys = Set(iPhone.values.keys).union(mac.values.keys).sorted()
    for key in allKeys {
      print(row(key, iPhone.values[key]?.logDescription ?? "-", mac.values[key]?.logDescription ?? "-"))
    }
    let equal = allKeys.filter { $0 != refused }.allSatisfy { iPhone.values[$0] == mac.values[$0] }
    let verdict = equal ? "yes, equal values for every synced key" : "NO, the devices differ"
    print("\nConverged: \(verdict) (the refused key stays on the iPhone only).")

    // What SyncStatusView shows: the status (budget, refusals, account, initial download,
    // last events), then the last seven days' metrics.
    heading("The iPhone's sync status")
    print(iPhone.coordinator.status.description.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
    heading("The iPhone's metrics")
    print(iPhone.coordinator.metrics.description.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
    return equal
  }
}

/// The transcript. Returns whether the devices converged and the suites to remove; the
/// coordinators are released on return, so they stop observing before the suites go away.
func runScenes(_ cloud: SimulatedCloud, ledgerDirectory: URL) -> (converged: Bool, suites: [(UserDefaults, String)]) {
  let keys = ["theme", "fontSize", "showsBadges", "lastTab"]
  guard let iPhone = Device(name: "iPhone", cloud: cloud, ledgerDirectory: ledgerDirectory, monitored: keys),
    let mac = Device(name: "Mac", cloud: cloud, ledgerDirectory: ledgerDirectory, monitored: keys)
  else {
    print("could not open a UserDefaults suite")
    return (false, [])
  }
  typedKeys(iPhone, mac, cloud)

  let scenes = StringKeyedScenes(cloud: cloud, iPhone: iPhone, mac: mac)
  scenes.plainEdits()
  scenes.differentKeys()
  scenes.conflict()
  guard let iPad = scenes.newInstall(ledgerDirectory: ledgerDirectory, monitored: keys) else {
    print("could not open a UserDefaults suite")
    return (false, [])
  }
  scenes.delete()
  let refused = scenes.longKey()
  let converged = scenes.converged(except: refused)
  return (converged, [iPhone, mac, iPad].map { ($0.defaults, $0.suiteName) })
}

let ledgerDirectory = FileManager.default.temporaryDirectory
  .appendingPathComponent("zephyr-demo-\(UUID().uuidString)", isDirectory: true)
let result = runScenes(SimulatedCloud(), ledgerDirectory: ledgerDirectory)
// Removing a persistent domain posts didChangeNotification (even on Linux), which a live
// coordinator would act on: the scenes' coordinators are released before the suites go.
RunLoop.main.run(until: Date())
for (defaults, name) in result.suites { defaults.removePersistentDomain(forName: name) }
try? FileManager.default.removeItem(at: ledgerDirectory)
exit(result.converged ? 0 : 1)

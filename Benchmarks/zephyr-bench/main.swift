import Foundation
import Zephyr
import ZephyrTesting

// zephyr-bench: what Zephyr costs an app, as JSON on standard output.
//
//     swift run -c release zephyr-bench            # 100, 1,000 and 10,000 keys
//     swift run -c release zephyr-bench 1000       # one size
//     swift run -c release zephyr-bench peers      # the peers' designs only (PeerComparison.swift)
//     swift run -c release zephyr-bench collections   # collections of ids only (Collections/)
//
// Every time is a median over repeated runs, and each size measures its own floor in the
// same run, so ratios hold on a noisy machine.

/// One device: a fresh suite, a ledger folder, a coordinator over a simulated cloud.
final class BenchDevice {
  let suiteName: String
  let defaults: UserDefaults
  let store: SimulatedDevice
  let coordinator: SyncCoordinator
  private let ledgerDirectory: URL

  init(name: String, cloud: SimulatedCloud, tag: String) {
    suiteName = "zephyr-bench.\(tag).\(name)"
    guard let defaults = UserDefaults(suiteName: suiteName) else { fatalError("cannot open suite \(suiteName)") }
    defaults.removePersistentDomain(forName: suiteName)
    self.defaults = defaults
    store = cloud.device(name)
    ledgerDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("zephyr-bench-\(tag)-\(name)")
    try? FileManager.default.removeItem(at: ledgerDirectory)
    coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: store,
      configuration: SyncConfiguration(
        deviceID: name, limits: cloud.limits, logHandler: { _ in }, ledgerDirectory: ledgerDirectory))
  }

  func tearDown() {
    defaults.removePersistentDomain(forName: suiteName)
    try? FileManager.default.removeItem(at: ledgerDirectory)
  }
}

func key(_ index: Int) -> String { "setting.\(index)" }

/// A realistic mix: strings, numbers, flags, dates and small dictionaries.
func value(_ index: Int, version: Int = 0) -> PropertyListValue {
  switch index % 5 {
  case 0: .string("value \(index) v\(version)")
  case 1: .integer(Int64(index * 31 + version))
  case 2: .bool((index + version).isMultiple(of: 2))
  case 3: .date(Date(timeIntervalSince1970: Double(1_700_000_000 + index + version)))
  default: .dictionary(["name": .string("item \(index)"), "size": .integer(Int64(version)), "on": .bool(true)])
  }
}

func limits(for keys: Int) -> StoreLimits {
  keys <= 1_024 ? .iCloud : StoreLimits(maximumTotalBytes: 1 << 30, maximumKeyCount: 1 << 20, maximumKeyBytes: 64)
}

func nanoseconds(_ body: () -> Void) -> Double {
  let start = DispatchTime.now().uptimeNanoseconds
  body()
  return Double(DispatchTime.now().uptimeNanoseconds - start)
}

func median(_ samples: [Double]) -> Double {
  let sorted = samples.sorted()
  return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func milliseconds(_ nanoseconds: Double) -> Double { (nanoseconds / 1e4).rounded() / 100 }

func ratio(_ part: Double, _ whole: Double) -> Double { whole > 0 ? (part / whole * 1000).rounded() / 1000 : 0 }

/// Figures for one store size.
func measure(keys count: Int, runs: Int) -> [String: Any] {
  let tag = "\(count)-\(UUID().uuidString.prefix(6))"
  let cloud = SimulatedCloud(limits: limits(for: count))
  let a = BenchDevice(name: "A", cloud: cloud, tag: tag)
  let b = BenchDevice(name: "B", cloud: cloud, tag: tag)
  defer {
    a.tearDown()
    b.tearDown()
  }
  let keys = (0..<count).map(key)
  for (index, name) in keys.enumerated() { a.defaults.set(value(index).foundationValue, forKey: name) }

  // (2) First upload.
  let writesBefore = a.store.statistics
  let firstUpload = nanoseconds { a.coordinator.sync() }
  let uploadWrites = a.store.statistics.writes - writesBefore.writes
  let uploadSynchronizations = a.store.statistics.synchronizeCalls - writesBefore.synchronizeCalls
  cloud.upload()
  cloud.download(to: "B", notify: false)
  b.coordinator.sync()
  a.coordinator.addKeysToBeMonitored(keys: keys)
  b.coordinator.addKeysToBeMonitored(keys: keys)

  // (1) Steady state, and its floor: read the persistent domain and the store, convert.
  var steady: [Double] = []
  var floor: [Double] = []
  let steadyBefore = a.store.statistics
  for _ in 0..<runs {
    steady.append(nanoseconds { a.coordinator.sync() })
    floor.append(
      nanoseconds {
        let domain = a.defaults.persistentDomain(forName: a.suiteName) ?? [:]
        var converted = 0
        for (_, raw) in domain where PropertyListValue(bridging: raw) != nil { converted += 1 }
        for (_, stored) in a.store.allValues() where stored != .bool(false) { converted += 1 }
        precondition(converted >= count)
      })
  }
  let steadyWrites = a.store.statistics.writes - steadyBefore.writes
  let steadySynchronizations = a.store.statistics.synchronizeCalls - steadyBefore.synchronizeCalls

  // (3) One inbound event changing one key. B's edit is made, uploaded and downloaded
  // into A's store cache untimed (the simulator's own download compares every key); the
  // event that names the key is what is timed, as Apple delivers it.
  var inbound: [Double] = []
  for run in 0..<runs {
    let index = (run * 7919) % count
    b.defaults.set(value(index, version: run + 1).foundationValue, forKey: key(index))
    b.coordinator.sync(keys: [key(index)])
    cloud.upload(from: "B")
    cloud.download(to: "A", notify: false)
    inbound.append(
      nanoseconds { cloud.post(ExternalChange(reason: .serverChange, keys: [key(index)]), to: "A") })
    precondition(
      PropertyListValue(bridging: a.defaults.object(forKey: key(index)) ?? 0) == value(index, version: run + 1),
      "the inbound event did not apply B's edit")
  }

  // (4) One local edit picked up from didChangeNotification.
  var localEdit: [Double] = []
  for run in 0..<runs {
    let index = (run * 104_729 + 1) % count
    a.defaults.set(value(index, version: 1_000 + run).foundationValue, forKey: key(index))
    localEdit.append(
      nanoseconds {
        NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: a.defaults)
        a.coordinator.waitForPendingLocalEdits()
      })
  }

  // (4b) One typed set, pushed: it knows its key, so nothing reads the domain. Timed up
  // to the end of its push (the coalesced batch on the local-edit queue). String keys only.
  var typedSet: [Double] = []
  for run in 0..<runs {
    let index = ((run * 7_919 + 3) % (count / 5)) * 5
    let typedKey = SyncKey<String>(key(index), default: "")
    _ = a.coordinator[typedKey]  // its first use (and the reconcile it schedules) is not timed
    a.coordinator.waitForPendingLocalEdits()
    typedSet.append(
      nanoseconds {
        a.coordinator[typedKey] = "typed \(run)"
        a.coordinator.waitForPendingLocalEdits()
      })
    precondition(a.store.value(forKey: key(index)) != nil, "the typed set was not pushed")
  }

  // Foundation's own floors, after a write: reading one key (which an inbound event
  // must do) and reading the domain (which a didChangeNotification, naming no key, must do).
  var keyReadAfterWrite: [Double] = []
  var domainReadAfterWrite: [Double] = []
  for run in 0..<runs {
    let index = (run * 104_729 + 2) % count
    a.defaults.set(value(index, version: 2_000 + run).foundationValue, forKey: key(index))
    keyReadAfterWrite.append(nanoseconds { _ = a.defaults.object(forKey: key(index)) })
    a.defaults.set(value(index, version: 3_000 + run).foundationValue, forKey: key(index))
    domainReadAfterWrite.append(nanoseconds { _ = a.defaults.persistentDomain(forName: a.suiteName) })
  }
  a.coordinator.sync()

  // (5) Record overhead, on the server once every write reached it.
  cloud.upload()
  let server = cloud.serverValues
  var overhead = 0
  var records = 0
  for (index, name) in keys.enumerated() {
    guard let stored = server[name] else { continue }
    overhead +=
      SimulatedCloud.binaryPlistSize(of: stored) - SimulatedCloud.binaryPlistSize(of: value(index, version: 0))
    records += 1
  }
  let extraKeys = Set(server.keys).subtracting(keys).count

  let steadyMedian = median(steady)
  return [
    "keys": count,
    "steady_sync_ms": milliseconds(steadyMedian),
    "steady_floor_ms": milliseconds(median(floor)),
    "steady_sync_over_floor": ratio(steadyMedian, median(floor)),
    "steady_store_writes": steadyWrites,
    "steady_synchronize_calls": steadySynchronizations,
    "first_upload_ms": milliseconds(firstUpload),
    "first_upload_writes": uploadWrites,
    "first_upload_synchronize_calls": uploadSynchronizations,
    "inbound_one_key_ms": milliseconds(median(inbound)),
    "inbound_over_steady": ratio(median(inbound), steadyMedian),
    "local_edit_ms": milliseconds(median(localEdit)),
    "local_edit_over_steady": ratio(median(localEdit), steadyMedian),
    "typed_set_ms": milliseconds(median(typedSet)),
    "typed_set_over_steady": ratio(median(typedSet), steadyMedian),
    "foundation_key_read_after_write_ms": milliseconds(median(keyReadAfterWrite)),
    "foundation_domain_read_after_write_ms": milliseconds(median(domainReadAfterWrite)),
    "record_overhead_bytes_per_key": records > 0 ? Double(overhead) / Double(records) : 0,
    "store_keys_per_synced_key": ratio(Double(server.count - extraKeys), Double(count)),
    "extra_metadata_keys": extraKeys,
  ]
}

/// (6) Three devices, random edits, deletes, syncs and deliveries; then rounds until equal.
func workload(keys count: Int, operations: Int) -> [String: Any] {
  let tag = "workload-\(count)-\(UUID().uuidString.prefix(6))"
  let cloud = SimulatedCloud(limits: limits(for: count))
  let devices = ["A", "B", "C"].map { BenchDevice(name: $0, cloud: cloud, tag: tag) }
  defer { for device in devices { device.tearDown() } }
  let keys = (0..<count).map(key)
  for device in devices { device.coordinator.addKeysToBeMonitored(keys: keys) }
  var generator = SystemRandomNumberGenerator()
  let elapsed = nanoseconds {
    for step in 0..<operations {
      let device = devices[Int.random(in: 0..<3, using: &generator)]
      let index = Int.random(in: 0..<count, using: &generator)
      switch Int.random(in: 0..<10, using: &generator) {
      case 0..<5: device.defaults.set(value(index, version: step).foundationValue, forKey: key(index))
      case 5: device.defaults.removeObject(forKey: key(index))
      case 6, 7: device.coordinator.sync(keys: [key(index)])
      case 8: device.coordinator.sync()
      default: cloud.deliver()
      }
    }
  }
  func converged() -> Bool {
    let domains = devices.map { device in
      (device.defaults.persistentDomain(forName: device.suiteName) ?? [:]).filter { keys.contains($0.key) }
        .compactMapValues(PropertyListValue.init(bridging:))
    }
    return domains.dropFirst().allSatisfy { $0 == domains[0] }
  }
  var rounds = 0
  while !converged(), rounds < 10 {
    cloud.deliver()
    for device in devices { device.coordinator.sync() }
    cloud.deliver()
    rounds += 1
  }
  return [
    "keys": count, "devices": 3, "operations": operations,
    "operations_per_second": (Double(operations) / (elapsed / 1e9)).rounded(),
    "rounds_to_converge": rounds, "converged": converged(),
  ]
}

if PeerComparison.handle(Array(CommandLine.arguments.dropFirst())) { exit(0) }
if CommandLine.arguments.dropFirst().first == "collections-profile" {
  let cloud = SimulatedCloud()
  let design = EngineSetDesign<PackedSet<UInt32>>(name: "packed set", cloud: cloud, tag: "profile", merge: .set)
  var workload = CollectionWorkload(name: "profile", initialCount: 25_000)
  workload.offlineAdds = 100
  print(workload.run(design, cloud: cloud))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "collections" {
  let rows = try JSONSerialization.data(
    withJSONObject: ["collections": CollectionsBench.run()], options: [.prettyPrinted, .sortedKeys])
  print(String(decoding: rows, as: UTF8.self))
  exit(0)
}
let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0) }
var report: [String: Any] = [
  "command": "swift run -c release zephyr-bench",
  "cores": ProcessInfo.processInfo.activeProcessorCount,
  "os": ProcessInfo.processInfo.operatingSystemVersionString,
]
var results: [[String: Any]] = []
for count in sizes.isEmpty ? [100, 1_000, 10_000] : sizes {
  results.append(measure(keys: count, runs: count >= 10_000 ? 5 : 21))
}
report["sizes"] = results
report["workload"] = workload(keys: 100, operations: 3_000)
report["peers"] = PeerComparison.run()
report["collections"] = CollectionsBench.run()
let json = try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys])
print(String(decoding: json, as: UTF8.self))

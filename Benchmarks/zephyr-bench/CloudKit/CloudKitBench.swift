import Foundation
import Zephyr
import ZephyrTesting

// zephyr-bench cloudkit: the two workloads the key-value store cannot hold, over
// SimulatedCloudKit (CloudKit's rules, the same core as CloudKitStore), with what the
// key-value store does with them.

/// One workload's figures.
struct CloudKitRow: Codable {
  var workload: String
  var store: String
  var keys: Int
  /// Keys the coordinator refused (too many keys, over the store's total).
  var refusedKeys: Int
  /// Bytes the store holds: key names and records.
  var storedBytes: Int
  /// Whether the second device ended with every value of the first.
  var converged: Bool
  var edits: Int
  /// Bytes sent per edit (CloudKit: record names and payloads of the saved records).
  var bytesSentPerEdit: Int?
  /// Requests per edit (CloudKit).
  var requestsPerEdit: Double?
  /// Median time of one edit: the coordinator's push and the upload.
  var editMilliseconds: Double
  /// The first upload of everything: its time and requests.
  var firstUploadMilliseconds: Double
  var firstUploadRequests: Int?
}

/// A device of the bench: a plain suite and a coordinator over `store`.
private final class Device {
  let suiteName: String
  let defaults: UserDefaults
  let coordinator: SyncCoordinator
  private let ledger: URL

  init(_ name: String, store: any KeyValueSyncStore, tag: String) {
    suiteName = "zephyr-bench.cloudkit.\(tag).\(name)"
    guard let defaults = UserDefaults(suiteName: suiteName) else { fatalError("cannot open suite \(suiteName)") }
    defaults.removePersistentDomain(forName: suiteName)
    self.defaults = defaults
    ledger = FileManager.default.temporaryDirectory.appendingPathComponent("zephyr-bench-ck-\(tag)-\(name)")
    try? FileManager.default.removeItem(at: ledger)
    coordinator = SyncCoordinator(
      defaults: defaults, suiteName: suiteName, store: store,
      configuration: SyncConfiguration(deviceID: name, logHandler: { _ in }, ledgerDirectory: ledger))
  }

  func tearDown() {
    defaults.removePersistentDomain(forName: suiteName)
    try? FileManager.default.removeItem(at: ledger)
  }
}

enum CloudKitBench {
  static let historyKeys = (0..<4).map { SyncKey<PackedSet<UInt32>>("history\($0)", default: [], merge: .set) }

  static func run(edits: Int = 50) -> [CloudKitRow] {
    [
      histories(cloudKit: true, edits: edits), histories(cloudKit: false, edits: edits),
      items(cloudKit: true, edits: edits), items(cloudKit: false, edits: edits),
    ]
  }

  /// Four read histories of 150,000 random 32-bit ids each (about 300 KB packed, 1.2 MB in
  /// all: past the key-value store's megabyte); then single inserts.
  static func histories(cloudKit: Bool, edits: Int) -> CloudKitRow {
    var random = SystemRandomNumberGenerator()
    let sets = historyKeys.map { _ in
      PackedSet<UInt32>((0..<150_000).map { _ in UInt32.random(in: 0...UInt32.max, using: &random) })
    }
    return measure(
      "four read histories of 150,000 ids", cloudKit: cloudKit, keys: historyKeys.map(\.name), edits: edits,
      fill: { a in for (key, set) in zip(historyKeys, sets) { a.coordinator[key] = set } },
      edit: { a, index in a.coordinator.insert(UInt32.random(in: 0...UInt32.max), into: historyKeys[index % 4]) })
  }

  /// 5,000 keys of one small dictionary each; then one key changed per edit.
  static func items(cloudKit: Bool, edits: Int) -> CloudKitRow {
    let keys = (0..<5_000).map { "item.\($0)" }
    return measure(
      "5,000 per-item keys", cloudKit: cloudKit, keys: keys, edits: edits,
      fill: { a in
        for (index, key) in keys.enumerated() {
          a.defaults.set(["starred": index % 3 == 0, "progress": Double(index) / 5_000], forKey: key)
        }
        a.coordinator.sync()
      },
      edit: { a, index in
        a.defaults.set(["starred": true, "progress": 1.0], forKey: keys[(index * 97) % keys.count])
        a.coordinator.sync(keys: [keys[(index * 97) % keys.count]])
      })
  }

  private static func measure(
    _ name: String, cloudKit: Bool, keys: [String], edits: Int, fill: (Device) -> Void, edit: (Device, Int) -> Void
  ) -> CloudKitRow {
    let tag = "\(cloudKit ? "ck" : "kv")-\(UUID().uuidString.prefix(6))"
    let kit = SimulatedCloudKit(delivery: .callingThread)
    let kvs = SimulatedCloud(delivery: .callingThread)
    let stores: [any KeyValueSyncStore] =
      cloudKit
      ? [kit.device("A", initiallyDownloaded: true), kit.device("B", initiallyDownloaded: true)]
      : [kvs.device("A", initiallyDownloaded: true), kvs.device("B", initiallyDownloaded: true)]
    let (a, b) = (Device("A", store: stores[0], tag: tag), Device("B", store: stores[1], tag: tag))
    defer { for device in [a, b] { device.tearDown() } }
    for device in [a, b] { device.coordinator.addKeysToBeMonitored(keys: keys) }
    let deliver = { cloudKit ? kit.deliver() : kvs.deliver() }
    let first = nanoseconds {
      fill(a)
      a.coordinator.waitForPendingLocalEdits()
      deliver()
    }
    let statistics = { kit.device("A").statistics }
    let before = statistics()
    var times: [Double] = []
    for index in 0..<edits {
      times.append(
        nanoseconds {
          edit(a, index)
          a.coordinator.waitForPendingLocalEdits()
          if cloudKit { kit.upload(from: "A") } else { kvs.upload(from: "A") }
        })
    }
    deliver()
    b.coordinator.sync()
    let after = statistics()
    let values = { (device: Device) in
      keys.map { device.defaults.object(forKey: $0).flatMap(PropertyListValue.init(bridging:)) }
    }
    let status = a.coordinator.status
    return CloudKitRow(
      workload: name, store: cloudKit ? "SimulatedCloudKit" : "SimulatedCloud", keys: keys.count,
      refusedKeys: status.refusedKeys.count, storedBytes: status.estimatedBytes,
      converged: values(a) == values(b) && values(a).allSatisfy { $0 != nil }, edits: edits,
      bytesSentPerEdit: cloudKit ? (after.bytesSent - before.bytesSent) / edits : nil,
      requestsPerEdit: cloudKit ? Double(after.requests - before.requests) / Double(edits) : nil,
      editMilliseconds: milliseconds(median(times)), firstUploadMilliseconds: milliseconds(first),
      firstUploadRequests: cloudKit ? before.requests : nil)
  }
}

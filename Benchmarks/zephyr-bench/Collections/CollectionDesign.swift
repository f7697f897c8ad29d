import Foundation
import Zephyr
import ZephyrTesting

/// One way an app can keep a synced collection of integer ids: what an edit, a read and an
/// inbound change cost, on three devices sharing one simulated cloud.
protocol CollectionDesign: AnyObject {
  /// The design's name in the JSON (`packed set`, `array set`, `hand-rolled blob`).
  var name: String { get }
  /// The devices' stores, in order.
  var stores: [SimulatedDevice] { get }
  /// Adds `ids` on device `index`, as one edit; pushed at once (`waiting`), or when the
  /// design's batch ends (see ``push(on:)``).
  func insert(_ ids: [UInt32], on index: Int, waiting: Bool)
  /// Removes `ids` on device `index`, as one edit made and pushed.
  func remove(_ ids: [UInt32], on index: Int)
  /// Whether device `index` holds `id`, as an app's "is this article read?" asks it.
  func contains(_ id: UInt32, on index: Int) -> Bool
  /// Every id device `index` holds now.
  func ids(on index: Int) -> Set<UInt32>
  /// Device `index` brings its store and its defaults together (a launch, a foreground).
  func sync(on index: Int)
  /// Pushes what device `index`'s edits left waiting (a coalesced batch).
  func push(on index: Int)
  /// Handles the inbound change of the key on device `index` (the store already holds the
  /// other device's record).
  func receive(on index: Int)
}

extension CollectionDesign {
  /// The key every design syncs.
  static var key: String { "read" }

  /// The binary-plist bytes of the key's record on the server.
  func recordBytes(in cloud: SimulatedCloud) -> Int {
    cloud.serverValues[Self.key].map(SimulatedCloud.binaryPlistSize(of:)) ?? 0
  }

  /// Every store write the devices made so far.
  var storeWrites: Int { stores.reduce(0) { $0 + $1.statistics.writes } }
}

/// This engine with a typed key, any set value the element API edits.
final class EngineSetDesign<Value: SetSyncValue>: CollectionDesign where Value.SetElement: FixedWidthInteger {
  let name: String
  let devices: [BenchDevice]
  let cloud: SimulatedCloud
  let syncKey: SyncKey<Value>
  private let elements: (Value) -> [Value.SetElement]
  private let holds: (Value, Value.SetElement) -> Bool

  init(
    name: String, cloud: SimulatedCloud, tag: String, merge: SyncKey<Value>.Merge,
    elements: @escaping (Value) -> [Value.SetElement], holds: @escaping (Value, Value.SetElement) -> Bool
  ) {
    self.name = name
    self.cloud = cloud
    devices = ["A", "B", "C"].map { BenchDevice(name: $0, cloud: cloud, tag: "\(tag)-\(name)") }
    syncKey = SyncKey<Value>(Self.key, default: Value(), merge: merge)
    self.elements = elements
    self.holds = holds
    for device in devices { _ = device.coordinator[syncKey] }
  }

  deinit { for device in devices { device.tearDown() } }

  var stores: [SimulatedDevice] { devices.map(\.store) }

  func insert(_ ids: [UInt32], on index: Int, waiting: Bool) {
    let coordinator = devices[index].coordinator
    coordinator.insert(contentsOf: ids.map { Value.SetElement(truncatingIfNeeded: $0) }, into: syncKey)
    if waiting { coordinator.waitForPendingLocalEdits() }
  }

  /// The coalesced push, started now rather than after the coalescing interval.
  func push(on index: Int) { devices[index].coordinator.waitForPendingLocalEdits() }

  func remove(_ ids: [UInt32], on index: Int) {
    let coordinator = devices[index].coordinator
    coordinator.remove(contentsOf: ids.map { Value.SetElement(truncatingIfNeeded: $0) }, from: syncKey)
    coordinator.waitForPendingLocalEdits()
  }

  func contains(_ id: UInt32, on index: Int) -> Bool {
    holds(devices[index].coordinator[syncKey], Value.SetElement(truncatingIfNeeded: id))
  }

  func ids(on index: Int) -> Set<UInt32> {
    Set(elements(devices[index].coordinator[syncKey]).map { UInt32(truncatingIfNeeded: $0) })
  }

  func sync(on index: Int) {
    devices[index].coordinator.sync()
    devices[index].coordinator.waitForPendingLocalEdits()
  }

  func receive(on index: Int) {
    cloud.post(ExternalChange(reason: .serverChange, keys: [Self.key]), to: devices[index].store.name)
  }
}

/// What apps do by hand: the ids packed into one `Data` of 4 bytes each, sorted, in
/// `UserDefaults` and in the store; the last write wins, so a mark made on another device
/// at the same time is lost.
final class HandRolledBlobDesign: CollectionDesign {
  let name = "hand-rolled blob"
  let stores: [SimulatedDevice]
  private let suites: [(name: String, defaults: UserDefaults)]
  /// Each device's ids, as the app keeps them in memory.
  private var held: [Set<UInt32>]

  init(cloud: SimulatedCloud, tag: String) {
    stores = ["A", "B", "C"].map { cloud.device($0, initiallyDownloaded: true) }
    suites = stores.map { store in
      let name = "zephyr-bench.\(tag)-blob.\(store.name)"
      guard let defaults = UserDefaults(suiteName: name) else { fatalError("cannot open suite \(name)") }
      defaults.removePersistentDomain(forName: name)
      return (name, defaults)
    }
    held = Array(repeating: [], count: stores.count)
  }

  deinit { for suite in suites { suite.defaults.removePersistentDomain(forName: suite.name) } }

  static func pack(_ ids: Set<UInt32>) -> Data {
    var sorted = ids.sorted()
    return sorted.withUnsafeMutableBytes { Data($0) }
  }

  static func unpack(_ blob: Data) -> Set<UInt32> {
    var ids = [UInt32](repeating: 0, count: blob.count / 4)
    _ = ids.withUnsafeMutableBytes { blob.copyBytes(to: $0) }
    return Set(ids)
  }

  private func write(on index: Int) {
    let blob = Self.pack(held[index])
    suites[index].defaults.set(blob, forKey: Self.key)
    stores[index].setValue(.data(blob), forKey: Self.key)
  }

  /// Every edit is written to the store at once: the app has no batch.
  func insert(_ ids: [UInt32], on index: Int, waiting: Bool) {
    held[index].formUnion(ids)
    write(on: index)
  }

  func push(on index: Int) {}

  func remove(_ ids: [UInt32], on index: Int) {
    held[index].subtract(ids)
    write(on: index)
  }

  func contains(_ id: UInt32, on index: Int) -> Bool { held[index].contains(id) }

  func ids(on index: Int) -> Set<UInt32> { held[index] }

  func sync(on index: Int) { receive(on: index) }

  /// The store's blob replaces the device's: decode it, keep it, write it to defaults.
  func receive(on index: Int) {
    guard case .data(let blob)? = stores[index].value(forKey: Self.key) else { return }
    held[index] = Self.unpack(blob)
    suites[index].defaults.set(blob, forKey: Self.key)
  }
}

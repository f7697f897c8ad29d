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
  /// Reads the key's value from device `index`'s `UserDefaults`, as ``receive(on:)`` may.
  func readDefaults(on index: Int)
  /// How many times device `index` has read the key from `UserDefaults` so far.
  func defaultsReads(on index: Int) -> Int
  /// The binary-plist bytes of the hand-rolled blob of the very elements device `index`
  /// holds (JSON + DEFLATE, or joined lines), so that a record is compared with the same
  /// elements; `nil` for a design that has none.
  func sameElementsBlobBytes(on index: Int) -> Int?
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

  func sameElementsBlobBytes(on index: Int) -> Int? { nil }
}

/// This engine with a typed key, any set value the element API edits; ids stand for
/// its elements (an id itself, or a starred article with that id).
final class EngineSetDesign<Value: SetSyncValue>: CollectionDesign {
  let name: String
  let devices: [BenchDevice]
  let cloud: SimulatedCloud
  let syncKey: SyncKey<Value>
  private let element: (UInt32) -> Value.SetElement
  private let elements: (Value) -> [UInt32]
  private let holds: (Value, UInt32) -> Bool
  private let handRolledBlob: ((Value) -> PropertyListValue)?

  init(
    name: String, cloud: SimulatedCloud, tag: String, key: SyncKey<Value>,
    element: @escaping (UInt32) -> Value.SetElement, elements: @escaping (Value) -> [UInt32],
    holds: @escaping (Value, UInt32) -> Bool, handRolledBlob: ((Value) -> PropertyListValue)? = nil
  ) {
    self.handRolledBlob = handRolledBlob
    self.name = name
    self.cloud = cloud
    // Devices the app has run on before, as the hand-rolled ones (a new install's edits
    // made before its initial download are merged as one write made at the download).
    devices = ["A", "B", "C"].map { BenchDevice(name: $0, cloud: cloud, tag: "\(tag)-\(name)", installed: true) }
    syncKey = key
    self.element = element
    self.elements = elements
    self.holds = holds
    for device in devices { _ = device.coordinator[syncKey] }
  }

  deinit { for device in devices { device.tearDown() } }

  var stores: [SimulatedDevice] { devices.map(\.store) }

  func insert(_ ids: [UInt32], on index: Int, waiting: Bool) {
    let coordinator = devices[index].coordinator
    coordinator.insert(contentsOf: ids.map(element), into: syncKey)
    if waiting { coordinator.waitForPendingLocalEdits() }
  }

  /// The coalesced push, started now rather than after the coalescing interval.
  func push(on index: Int) { devices[index].coordinator.waitForPendingLocalEdits() }

  func remove(_ ids: [UInt32], on index: Int) {
    let coordinator = devices[index].coordinator
    coordinator.remove(contentsOf: ids.map(element), from: syncKey)
    coordinator.waitForPendingLocalEdits()
  }

  func contains(_ id: UInt32, on index: Int) -> Bool {
    holds(devices[index].coordinator[syncKey], id)
  }

  func ids(on index: Int) -> Set<UInt32> {
    Set(elements(devices[index].coordinator[syncKey]))
  }

  func sync(on index: Int) {
    devices[index].coordinator.sync()
    devices[index].coordinator.waitForPendingLocalEdits()
  }

  func receive(on index: Int) {
    cloud.post(ExternalChange(reason: .serverChange, keys: [Self.key]), to: devices[index].store.name)
  }

  func readDefaults(on index: Int) { _ = devices[index].defaults.object(forKey: Self.key) }

  func defaultsReads(on index: Int) -> Int { devices[index].defaults.reads(of: Self.key) }

  func sameElementsBlobBytes(on index: Int) -> Int? {
    handRolledBlob.map { SimulatedCloud.binaryPlistSize(of: $0(devices[index].coordinator[syncKey])) }
  }
}

extension EngineSetDesign where Value == PackedSet<UInt32> {
  /// A ``PackedSet`` of ids.
  convenience init(name: String, cloud: SimulatedCloud, tag: String, merge: SyncKey<Value>.Merge) {
    self.init(
      name: name, cloud: cloud, tag: tag, key: SyncKey(Self.key, default: [], merge: merge), element: { $0 },
      elements: { Array($0) }, holds: { $0.contains($1) })
  }
}

extension EngineSetDesign where Value == [Int] {
  /// An array of ids, as apps declare `SyncKey<[Int]>`.
  convenience init(name: String, cloud: SimulatedCloud, tag: String, merge: SyncKey<Value>.Merge) {
    self.init(
      name: name, cloud: cloud, tag: tag, key: SyncKey(Self.key, default: [], merge: merge), element: { Int($0) },
      elements: { $0.map { UInt32(truncatingIfNeeded: $0) } }, holds: { $0.contains(Int($1)) })
  }
}

extension EngineSetDesign where Value == [StarredArticle] {
  /// Starred articles, merged as a set, stored compressed or not; `realistic`: with
  /// varied titles and URLs (``StarredArticle/init(id:realistic:)``).
  convenience init(name: String, cloud: SimulatedCloud, tag: String, compressed: Bool, realistic: Bool = false) {
    self.init(
      name: name, cloud: cloud, tag: tag,
      key: SyncKey(Self.key, default: [], merge: .set, compressed: compressed),
      element: { StarredArticle(id: $0, realistic: realistic) },
      elements: { $0.map(\.id) }, holds: { articles, id in articles.contains { $0.id == id } },
      handRolledBlob: { .data(HandRolledJSONDesign.blob(of: $0)) })
  }
}

/// A starred article, as an RSS reader keeps a few hundred: short keys, small values.
struct StarredArticle: Codable, SyncValue, Hashable {
  var id: UInt32
  var title: String
  var url: String
  var date: Date

  enum CodingKeys: String, CodingKey {
    case id = "i"
    case title = "t"
    case url = "u"
    case date = "d"
  }

  /// The article with this id; the same on every call. `realistic`: a title and a URL
  /// of words drawn from ``BenchWords`` (seeded by the id), as feeds give them, rather
  /// than one sentence repeated with a number, which compression flatters.
  init(id: UInt32, realistic: Bool = false) {
    self.id = id
    date = Date(timeIntervalSince1970: 1_700_000_000 + Double(id % 100_000) * 60)
    guard realistic else {
      title = "Article \(id % 10_000): on syncing small settings"
      url = "https://example.com/feed/\(id % 17)/\(id)"
      return
    }
    var random = SplitMix64(seed: UInt64(id) &* 0x2545_F491_4F6C_DD1D ^ 0x5EED_A271)
    let words = BenchWords.draw(4 + Int(random.next() % 7), using: &random)
    title = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    let site = BenchWords.sites[Int(random.next() % UInt64(BenchWords.sites.count))]
    let year = 2019 + random.next() % 7
    let month = 1 + random.next() % 12
    url =
      "https://\(site)/\(year)/\(month < 10 ? "0" : "")\(month)/\(words.prefix(5).joined(separator: "-"))-\(id % 9_973)"
  }
}

/// What apps do by hand: the ids packed into one `Data` of 4 bytes each, sorted, in
/// `UserDefaults` and in the store; the last write wins, so a mark made on another device
/// at the same time is lost.
final class HandRolledBlobDesign: CollectionDesign {
  let name = "hand-rolled blob"
  let stores: [SimulatedDevice]
  private let suites: [(name: String, defaults: ReadCountingDefaults)]
  /// Each device's ids, as the app keeps them in memory.
  private var held: [Set<UInt32>]
  /// Each device's ids in the order it added them, when the app trims to a capacity.
  private var order: [[UInt32]]
  private let capacity: Int?

  /// - Parameter capacity: Trim each device's set to its newest `capacity` ids, as a
  ///   reader trims its history (each device by its own order of adds).
  init(cloud: SimulatedCloud, tag: String, capacity: Int? = nil) {
    self.capacity = capacity
    order = Array(repeating: [], count: 3)
    (stores, suites) = handRolledDevices(cloud: cloud, tag: "\(tag)-blob")
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
    if let capacity {
      order[index] = order[index].filter(held[index].contains) + ids
      if order[index].count > capacity {
        held[index].subtract(order[index].prefix(order[index].count - capacity))
        order[index].removeFirst(order[index].count - capacity)
      }
    }
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

  func readDefaults(on index: Int) { _ = suites[index].defaults.object(forKey: Self.key) }

  func defaultsReads(on index: Int) -> Int { suites[index].defaults.reads(of: Self.key) }

  /// The store's blob replaces the device's: decode it, keep it, write it to defaults.
  func receive(on index: Int) {
    guard case .data(let blob)? = stores[index].value(forKey: Self.key) else { return }
    held[index] = Self.unpack(blob)
    // The blob keeps no order: ids another device added count as the oldest here.
    if capacity != nil {
      order[index] = held[index].subtracting(order[index]).sorted() + order[index].filter(held[index].contains)
    }
    suites[index].defaults.set(blob, forKey: Self.key)
  }
}

/// Starred articles by hand: JSON of the array, compressed, in `UserDefaults` and the
/// store; the last write wins.
final class HandRolledJSONDesign: CollectionDesign {
  let name = "hand-rolled blob"
  let stores: [SimulatedDevice]
  private let suites: [(name: String, defaults: ReadCountingDefaults)]
  private var held: [[UInt32: StarredArticle]]
  private let realistic: Bool

  init(cloud: SimulatedCloud, tag: String, realistic: Bool = false) {
    self.realistic = realistic
    (stores, suites) = handRolledDevices(cloud: cloud, tag: "\(tag)-json")
    held = Array(repeating: [:], count: stores.count)
  }

  deinit { for suite in suites { suite.defaults.removePersistentDomain(forName: suite.name) } }

  /// The articles as JSON, compressed: what the app stores.
  static func blob(of articles: [StarredArticle]) -> Data {
    guard let json = try? JSONEncoder().encode(articles), let blob = try? Deflate.compress(json) else {
      fatalError("cannot encode the starred articles")
    }
    return blob
  }

  private func write(on index: Int) {
    let blob = Self.blob(of: held[index].values.sorted { $0.id < $1.id })
    suites[index].defaults.set(blob, forKey: Self.key)
    stores[index].setValue(.data(blob), forKey: Self.key)
  }

  func insert(_ ids: [UInt32], on index: Int, waiting: Bool) {
    for id in ids { held[index][id] = StarredArticle(id: id, realistic: realistic) }
    write(on: index)
  }

  func push(on index: Int) {}

  func remove(_ ids: [UInt32], on index: Int) {
    for id in ids { held[index][id] = nil }
    write(on: index)
  }

  func contains(_ id: UInt32, on index: Int) -> Bool { held[index][id] != nil }

  func ids(on index: Int) -> Set<UInt32> { Set(held[index].keys) }

  func sync(on index: Int) { receive(on: index) }

  func readDefaults(on index: Int) { _ = suites[index].defaults.object(forKey: Self.key) }

  func defaultsReads(on index: Int) -> Int { suites[index].defaults.reads(of: Self.key) }

  func receive(on index: Int) {
    guard case .data(let blob)? = stores[index].value(forKey: Self.key), let json = try? Deflate.decompress(blob),
      let articles = try? JSONDecoder().decode([StarredArticle].self, from: json)
    else { return }
    held[index] = Dictionary(uniqueKeysWithValues: articles.map { ($0.id, $0) })
    suites[index].defaults.set(blob, forKey: Self.key)
  }
}

/// Three devices of a hand-rolled design: their stores (downloaded, as an app that has
/// run before) and fresh suites, without a coordinator.
func handRolledDevices(
  cloud: SimulatedCloud, tag: String
) -> ([SimulatedDevice], [(name: String, defaults: ReadCountingDefaults)]) {
  let stores = ["A", "B", "C"].map { cloud.device($0, initiallyDownloaded: true) }
  let suites = stores.map { store in
    let name = "zephyr-bench.\(tag).\(store.name)"
    guard let defaults = ReadCountingDefaults(suiteName: name) else { fatalError("cannot open suite \(name)") }
    defaults.removePersistentDomain(forName: name)
    return (name, defaults)
  }
  return (stores, suites)
}

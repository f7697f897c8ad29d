import Foundation
import Zephyr
import ZephyrTesting

/// Words for realistic titles, slugs and URLs: varied enough that compression is not
/// flattered by one sentence repeated.
enum BenchWords {
  static let words: [String] = """
    apple autumn bridge budget canyon castle cedar chorus circuit climate coastal comet \
    compass copper cotton crystal dawn delta desert dragon drift eagle echo ember engine \
    falcon fern festival field flame forest fossil fountain galaxy garden glacier granite \
    harbor harvest hazel horizon island ivory jasmine jungle kettle lantern lava ledger \
    lemon lighthouse lunar maple marble meadow meteor mirror monsoon mosaic mountain \
    nebula needle oasis ocean orbit orchard origami pebble pepper pilot pixel planet \
    prairie prism quartz quiet rabbit radar rain raven reef ribbon river rocket saffron \
    savanna shadow signal silver sketch solar spiral spring storm summit sunset swift \
    tangent thunder timber tundra twilight valley velvet violet voyage walnut willow \
    winter zenith how why what new best guide review notes update first last inside \
    behind under over after before small large quick slow simple hidden open modern \
    classic future past city market school music studio design coffee travel weekend
    """.split(separator: " ").map(String.init)

  static let sites = [
    "www.theverge.com", "arstechnica.com", "daringfireball.net", "www.macstories.net", "sixcolors.com",
    "www.nytimes.com", "blog.example.org", "news.ycombinator.com", "www.swift.org", "nshipster.com",
  ]

  /// `count` words drawn by `random`.
  static func draw(_ count: Int, using random: inout SplitMix64) -> [String] {
    (0..<count).map { _ in words[Int(random.next() % UInt64(words.count))] }
  }
}

/// A favorite's string id, as wallpaper and reader apps keep them: UUID-like for even ids,
/// a slug for odd ones; each names its number, so the bench reads it back.
enum FavoriteID {
  static func string(for id: UInt32) -> String {
    var random = SplitMix64(seed: UInt64(id) ^ 0xFA70_12E5)
    if id.isMultiple(of: 2) {
      func hex(_ bits: UInt64, _ digits: Int) -> String {
        let text = String(bits, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text.suffix(digits)
      }
      let tail = hex(random.next(), 12)
      return
        "\(hex(UInt64(id), 8))-\(hex(random.next(), 4))-4\(hex(random.next(), 3))-a\(hex(random.next(), 3))-\(tail)"
        .uppercased()
    }
    let words = BenchWords.draw(2 + Int(random.next() % 3), using: &random)
    return (words + [String(id, radix: 36)]).joined(separator: "-")
  }

  /// The number `string` names; `nil` for a string no ``string(for:)`` made. (A slug
  /// begins with a lowercase word; a UUID-like id with a digit or an uppercase letter.)
  static func id(of string: String) -> UInt32? {
    if string.first?.isLowercase == false { return UInt32(string.prefix(8), radix: 16) }
    return string.split(separator: "-").last.flatMap { UInt32($0, radix: 36) }
  }
}

extension EngineSetDesign where Value == [String] {
  /// Favorites as string ids (``FavoriteID``), as apps declare `SyncKey<[String]>`.
  convenience init(name: String, cloud: SimulatedCloud, tag: String, merge: SyncKey<Value>.Merge) {
    self.init(
      name: name, cloud: cloud, tag: tag, key: SyncKey(Self.key, default: [], merge: merge),
      element: FavoriteID.string(for:), elements: { $0.compactMap(FavoriteID.id(of:)) },
      holds: { $0.contains(FavoriteID.string(for: $1)) },
      handRolledBlob: { .string($0.sorted().joined(separator: "\n")) })
  }
}

/// Favorites by hand, as the wallpaper apps keep them: the string ids joined by newlines,
/// one `String` in `UserDefaults` and in the store; the last write wins.
final class HandRolledStringsDesign: CollectionDesign {
  let name = "hand-rolled blob"
  let stores: [SimulatedDevice]
  private let suites: [(name: String, defaults: ReadCountingDefaults)]
  /// Each device's ids, as the app keeps them in memory.
  private var held: [Set<String>]

  init(cloud: SimulatedCloud, tag: String) {
    (stores, suites) = handRolledDevices(cloud: cloud, tag: "\(tag)-lines")
    held = Array(repeating: [], count: stores.count)
  }

  deinit { for suite in suites { suite.defaults.removePersistentDomain(forName: suite.name) } }

  private func write(on index: Int) {
    let blob = held[index].sorted().joined(separator: "\n")
    suites[index].defaults.set(blob, forKey: Self.key)
    stores[index].setValue(.string(blob), forKey: Self.key)
  }

  func insert(_ ids: [UInt32], on index: Int, waiting: Bool) {
    held[index].formUnion(ids.map(FavoriteID.string(for:)))
    write(on: index)
  }

  func push(on index: Int) {}

  func remove(_ ids: [UInt32], on index: Int) {
    held[index].subtract(ids.map(FavoriteID.string(for:)))
    write(on: index)
  }

  func contains(_ id: UInt32, on index: Int) -> Bool { held[index].contains(FavoriteID.string(for: id)) }

  func ids(on index: Int) -> Set<UInt32> { Set(held[index].compactMap(FavoriteID.id(of:))) }

  func sync(on index: Int) { receive(on: index) }

  func readDefaults(on index: Int) { _ = suites[index].defaults.object(forKey: Self.key) }

  func defaultsReads(on index: Int) -> Int { suites[index].defaults.reads(of: Self.key) }

  /// The store's lines replace the device's.
  func receive(on index: Int) {
    guard case .string(let blob)? = stores[index].value(forKey: Self.key) else { return }
    held[index] = Set(blob.split(separator: "\n").map(String.init))
    suites[index].defaults.set(blob, forKey: Self.key)
  }
}

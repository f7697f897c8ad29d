import Foundation
import Zephyr

/// Zephyr 5.0.1: per-key generations kept in three maps that every device rewrites.
///
/// Assumptions, from ArtSabintsev/Zephyr 5.0.1 (`Sources/Zephyr.swift` and
/// `Sources/ZephyrReconciler.swift` at 6acddc82, whose `CHANGELOG.md` tops at 5.0.1):
/// - Generations live in maps, not next to the values: `Zephyr.v5.versions`,
///   `Zephyr.v5.tombstones` (key → generation) and `Zephyr.v5.knownKeys`, each kept both
///   in `UserDefaults` and as one store key. A key's generation is the larger of its
///   version and tombstone; it is deleted when its tombstone is the larger.
/// - A local edit (from `didChangeNotification`, diffed against a snapshot of the
///   monitored keys) takes the next *global* generation: one above every generation in
///   either side's maps. The key is then decided alone, with local preferred.
/// - Decisions per key: the higher generation wins (push or pull, a value or a delete);
///   equal generations: absence is not a delete (the present side wins), different values
///   go by the mismatch policy (`sync()`: local; an inbound event: remote), and a push or
///   pull at equal generations takes a fresh global generation.
/// - After every decision pass, each side's three maps are rewritten whole: the side's
///   current maps with the decided keys' winning entries laid over them (plus a removal of
///   the legacy `ZephyrSyncKey`), then `synchronize()`. Tombstones are never collected.
/// - A store event: the named monitored keys (all monitored keys when it names only
///   metadata or nothing) are reconciled with remote preferred.
/// - Launch: `synchronize()` (from `init`), the keys monitored, `sync()`.
final class Zephyr5Model: PeerModel {
  static let versionsKey = "Zephyr.v5.versions"
  static let tombstonesKey = "Zephyr.v5.tombstones"
  static let knownKeysKey = "Zephyr.v5.knownKeys"
  static let legacyKey = "ZephyrSyncKey"
  static let metadataKeys: Set<String> = [versionsKey, tombstonesKey, knownKeysKey, legacyKey]

  enum Mismatch { case preferLocal, preferRemote }

  private let store: any KeyValueSyncStore
  private let local: LocalDefaults
  /// The monitored keys' values as last seen, to tell the user's edits apart.
  private var snapshot: [String: PropertyListValue] = [:]

  init(store: any KeyValueSyncStore, local: LocalDefaults) {
    self.store = store
    self.local = local
    store.synchronize()
  }

  func launch() {
    refreshSnapshot()
    sync()
  }

  func localDidChange(_ key: String) {
    for key in PeerScenario.keys where local.values[key] != snapshot[key] {
      recordLocalChange(key, deleted: local.values[key] == nil)
    }
    refreshSnapshot()
  }

  func sync() {
    reconcile(nil, mismatch: .preferLocal)
  }

  func storeDidChange(_ change: ExternalChange) {
    guard change.reason != .quotaViolation else { return }
    let named = Set(change.keys ?? []).subtracting(Self.metadataKeys)
    let limited = named.isEmpty ? Set(PeerScenario.keys) : named.intersection(PeerScenario.keys)
    guard !limited.isEmpty else { return }
    reconcile(limited, mismatch: .preferRemote)
  }

  // MARK: Passes

  private func reconcile(_ keys: Set<String>?, mismatch: Mismatch) {
    let edited = PeerScenario.keys.filter { local.values[$0] != snapshot[$0] }
    for key in edited { recordLocalChange(key, deleted: local.values[key] == nil) }
    var mine = loadLocal()
    let remote = loadRemote()
    let universe = keys ?? mine.keys.union(remote.keys)
    let bump = Z5Snapshot.nextGeneration(mine, remote)
    for key in universe.sorted() {
      let equal = mine.generation(key) == remote.generation(key)
      switch Z5Snapshot.decide(key, local: mine, remote: remote, mismatch: mismatch) {
      case .pushValue:
        guard let value = mine.values[key] else { break }
        store.setValue(value, forKey: key)
        if equal { mine.setVersion(key, bump) }
      case .pullValue:
        guard !edited.contains(key), let value = remote.values[key] else { break }
        local.values[key] = value
        mine.values[key] = value
        if equal { mine.setVersion(key, bump) }
      case .pushDelete:
        store.removeValue(forKey: key)
        mine.values[key] = nil
      case .pullDelete:
        local.values[key] = nil
        mine.values[key] = nil
      case .skip:
        break
      }
    }
    writeMetadata(Z5Snapshot.merged(mine, remote, keys: universe), known: universe)
    store.synchronize()
    refreshSnapshot()
  }

  private func recordLocalChange(_ key: String, deleted: Bool) {
    var mine = loadLocal()
    let remote = loadRemote()
    let next = Z5Snapshot.nextGeneration(mine, remote)
    if deleted {
      mine.setTombstone(key, next)
      mine.values[key] = nil
    } else if let value = local.values[key] {
      mine.setVersion(key, next)
      mine.values[key] = value
    } else {
      return
    }
    switch Z5Snapshot.decide(key, local: mine, remote: remote, mismatch: .preferLocal) {
    case .pushValue: if let value = mine.values[key] { store.setValue(value, forKey: key) }
    case .pushDelete: store.removeValue(forKey: key)
    case .pullValue:
      local.values[key] = remote.values[key]
      mine.values[key] = remote.values[key]
    case .pullDelete:
      local.values[key] = nil
      mine.values[key] = nil
    case .skip: break
    }
    writeMetadata(Z5Snapshot.merged(mine, remote, keys: [key]), known: [key])
    store.synchronize()
  }

  // MARK: Metadata

  private func loadLocal() -> Z5Snapshot {
    Z5Snapshot(
      values: local.values.filter { !Self.metadataKeys.contains($0.key) },
      versions: Self.map(local.values[Self.versionsKey]), tombstones: Self.map(local.values[Self.tombstonesKey]))
  }

  private func loadRemote() -> Z5Snapshot {
    let all = store.allValues()
    return Z5Snapshot(
      values: all.filter { !Self.metadataKeys.contains($0.key) },
      versions: Self.map(all[Self.versionsKey]), tombstones: Self.map(all[Self.tombstonesKey]))
  }

  /// Each side keeps its own maps and gets the decided keys' entries laid over them.
  private func writeMetadata(_ update: (versions: [String: UInt64], tombstones: [String: UInt64]), known: Set<String>) {
    let remote = store.allValues()
    let localSide = Self.overlay(
      versions: Self.map(local.values[Self.versionsKey]), tombstones: Self.map(local.values[Self.tombstonesKey]),
      known: Self.strings(local.values[Self.knownKeysKey]), update: update, updateKnown: known)
    let remoteSide = Self.overlay(
      versions: Self.map(remote[Self.versionsKey]), tombstones: Self.map(remote[Self.tombstonesKey]),
      known: Self.strings(remote[Self.knownKeysKey]), update: update, updateKnown: known)
    local.values[Self.versionsKey] = localSide.versions
    local.values[Self.tombstonesKey] = localSide.tombstones
    local.values[Self.knownKeysKey] = localSide.known
    local.values[Self.legacyKey] = nil
    store.setValue(remoteSide.versions, forKey: Self.versionsKey)
    store.setValue(remoteSide.tombstones, forKey: Self.tombstonesKey)
    store.setValue(remoteSide.known, forKey: Self.knownKeysKey)
    store.removeValue(forKey: Self.legacyKey)
  }

  private static func overlay(
    versions: [String: UInt64], tombstones: [String: UInt64], known: Set<String>,
    update: (versions: [String: UInt64], tombstones: [String: UInt64]), updateKnown: Set<String>
  ) -> (versions: PropertyListValue, tombstones: PropertyListValue, known: PropertyListValue) {
    var versions = versions
    var tombstones = tombstones
    for (key, generation) in update.versions {
      versions[key] = generation
      tombstones[key] = nil
    }
    for (key, generation) in update.tombstones {
      tombstones[key] = generation
      versions[key] = nil
    }
    let names = known.union(updateKnown).subtracting(metadataKeys).sorted()
    return (plist(versions), plist(tombstones), .array(names.map(PropertyListValue.string)))
  }

  private static func map(_ value: PropertyListValue?) -> [String: UInt64] {
    guard case .dictionary(let entries)? = value else { return [:] }
    return entries.compactMapValues { entry in
      if case .integer(let number) = entry, number >= 0 { return UInt64(number) }
      return nil
    }
  }

  private static func plist(_ map: [String: UInt64]) -> PropertyListValue {
    .dictionary(map.mapValues { .integer(Int64(clamping: $0)) })
  }

  private static func strings(_ value: PropertyListValue?) -> Set<String> {
    guard case .array(let items)? = value else { return [] }
    return Set(items.compactMap { if case .string(let text) = $0 { text } else { nil } })
  }

  private func refreshSnapshot() {
    snapshot = local.values.filter { PeerScenario.keys.contains($0.key) }
  }
}

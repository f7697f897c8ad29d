import Foundation
import Zephyr

// Small models of the peers' merge designs, written for this benchmark from their public
// source (facts, not code). Each keeps what decides which value wins and what the store
// is asked to do; logging, threading and platform glue are left out. Zephyr 5.0.1 is in
// Zephyr5Model.swift, Defaults 9 in Defaults9Model.swift. The sources read, pinned:
// - Zephyr 3.8 / 4: ArtSabintsev/Zephyr `Sources/Zephyr.swift` at 78e6f2ab (podspec
//   3.2.0) and at 1653bd61 (an earlier one), the last pre-5 versions of the file we could
//   read; and the 5.0.0 entry of `CHANGELOG.md` at 6acddc82, which lists what 4.x still
//   did: one store-level `ZephyrSyncKey` date, full `sync()` over
//   `dictionaryRepresentation()`, a `synchronize()` per key, KVO monitoring. The 3.8 and
//   4.x tags themselves were not in the index we searched.
// - Defaults 9: sindresorhus/Defaults `Sources/Defaults/Defaults+iCloud.swift` at
//   034b159d (per-key `[Date, value]`; an earlier version, e79ec465, kept one
//   store-wide date and made `syncWithoutWaiting()` public).
// - This engine: `Sources/Zephyr` of this package, at the commit the bench is built from
//   (EngineReplica.swift).

/// Zephyr 3.8 / 4: one `ZephyrSyncKey` date for the whole store.
///
/// Assumptions, from the 3.x/4.x source (see the top of this file):
/// - Both sides keep a `ZephyrSyncKey` date (the device's wall clock, `Date()`). The side
///   with the later date is "newer"; a side without a date is older than one with it.
/// - `sync()` (no keys): if local is newer, the cloud's date is set to now and every local
///   key (the stamp included, so in key order it overwrites the fresh date) is copied to
///   the store, with a `synchronize()` per key; otherwise local's date is set to now and
///   every store key is copied to local. Neither direction removes keys.
/// - A monitored key's edit (KVO): local date = now, then the key alone goes to the store
///   (cloud date = now; set, or remove when the local value is absent: absence means
///   delete), then `synchronize()`.
/// - A store event: only when it names keys and the cloud's date is later than local's;
///   then each named monitored key is copied from the store (local date = now first;
///   absent in the store: removed locally).
/// - Launch: `synchronize()` (from `init`), the keys monitored, `sync()`.
///
/// Two choices of the model (both said in ComparedWithOtherLibraries.md); the first understates
/// this design's costs:
/// - "Every local key" is only the workload's four keys and `ZephyrSyncKey`. The real
///   `sync()` copies `userDefaults.dictionaryRepresentation()`: system keys
///   (`AppleLanguages`, `AppleLocale`, …) and registered defaults too, each one a store
///   write and a `synchronize()`, each one a store key more. How many depends on the
///   device, so the model leaves them out.
/// - The app calls `sync()` (the README at 01ec89ce shows it first), not `sync(keys:)`.
///   `sync(keys:)` decides the direction by the same date but copies only the named keys,
///   and a named key absent on the winning side is removed on the other.
final class Zephyr4Model: PeerModel {
  static let syncKey = "ZephyrSyncKey"
  private let store: any KeyValueSyncStore
  private let local: LocalDefaults
  private let clock: PeerClock

  init(store: any KeyValueSyncStore, local: LocalDefaults, clock: PeerClock) {
    self.store = store
    self.local = local
    self.clock = clock
    store.synchronize()
  }

  func launch() { sync() }

  func localDidChange(_ key: String) {
    local.values[Self.syncKey] = .date(clock.now)
    pushKey(key)
  }

  func sync() {
    if localIsNewer {
      store.setValue(.date(clock.now), forKey: Self.syncKey)
      for (key, value) in local.values.sorted(by: { $0.key < $1.key }) {
        store.setValue(value, forKey: key)
        store.synchronize()
      }
    } else {
      local.values[Self.syncKey] = .date(clock.now)
      for (key, value) in store.allValues().sorted(by: { $0.key < $1.key }) { local.values[key] = value }
    }
  }

  func storeDidChange(_ change: ExternalChange) {
    guard let keys = change.keys, case .date(let localDate)? = local.values[Self.syncKey],
      case .date(let remoteDate)? = store.value(forKey: Self.syncKey), remoteDate > localDate
    else { return }
    for key in PeerScenario.keys where keys.contains(key) {
      local.values[Self.syncKey] = .date(clock.now)
      local.values[key] = store.value(forKey: key)
    }
  }

  private var localIsNewer: Bool {
    switch (local.values[Self.syncKey], store.value(forKey: Self.syncKey)) {
    case (.date(let localDate)?, .date(let remoteDate)?): localDate > remoteDate
    case (_, nil): true
    default: false
    }
  }

  private func pushKey(_ key: String) {
    store.setValue(.date(clock.now), forKey: Self.syncKey)
    if let value = local.values[key] {
      store.setValue(value, forKey: key)
    } else {
      store.removeValue(forKey: key)
    }
    store.synchronize()
  }
}

import Foundation
import Zephyr

// Small models of the peers' merge designs, written for this benchmark from their public
// source (facts, not code). Each keeps what decides which value wins and what the store
// is asked to do; logging, threading and platform glue are left out. Zephyr 5.0.1 is in
// PeerModelZephyr5.swift. The sources read, pinned:
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
//   (PeerEngineReplica.swift).

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

/// Defaults 9 (`iCloud: true` keys): `[Date, value]` per key, wall-clock last-writer-wins.
///
/// Assumptions, from `Defaults+iCloud.swift` at 034b159d:
/// - Every sync task is stamped with `Date()` when it is queued (the device's wall clock).
///   Tasks run in order on one queue; the model runs each at once.
/// - A local edit: local stamp (`<key>__DEFAULTS__synchronizeTimestamp`) = now; the store
///   gets `[now, value]`, or the key is removed when the local value is gone (a reset);
///   then `synchronize()` (`syncOnChange` is on).
/// - A store event naming keys: a key is pulled only when the store holds a stamp and it
///   is later than the local one; the pull writes the value and sets the local stamp to
///   now. A removed key has no stamp, so the event is ignored: deletes do not propagate.
/// - The workload's "sync" step is `waitForSyncCompletion()`, the only sync call an app
///   can make: `syncWithoutWaiting()` is internal at 034b159d (`static func`, no
///   `public`). It awaits the queue's tasks (`backgroundQueue.flush()`) and starts none,
///   so with every task already run it does nothing; the final rounds' syncs likewise.
/// - Launch (`init` calls `synchronize()`; each key is added again, as `add` does for an
///   `iCloud: true` key): a key at its default (absent) only pulls, when the store's
///   stamp is the later; any other key syncs by the later stamp (the same rule as
///   `syncWithoutWaiting`, which `add` calls internally): a local winner is written as
///   `[now, value]` (or removed) without touching the local stamp, a remote winner is
///   pulled as above; no stamp on either side: nothing.
/// - The stamp lives in `UserDefaults` only: no extra store key.
final class Defaults9Model: PeerModel {
  private static let stampSuffix = "__DEFAULTS__synchronizeTimestamp"
  private let store: any KeyValueSyncStore
  private let local: LocalDefaults
  private let clock: PeerClock

  init(store: any KeyValueSyncStore, local: LocalDefaults, clock: PeerClock) {
    self.store = store
    self.local = local
    self.clock = clock
    store.synchronize()
  }

  func launch() {
    for key in PeerScenario.keys {
      if local.values[key] == nil {
        if latestIsRemote(key) == true { pull(key) }
      } else {
        syncKey(key)
      }
    }
  }

  func localDidChange(_ key: String) {
    local.values[key + Self.stampSuffix] = .date(clock.now)
    pushKey(key)
  }

  /// `waitForSyncCompletion()`: awaits queued tasks, starts none (see above).
  func sync() {}

  func storeDidChange(_ change: ExternalChange) {
    guard let keys = change.keys else { return }
    for key in PeerScenario.keys where keys.contains(key) {
      guard let remote = remoteStamp(key) else { continue }
      if let stamp = localStamp(key), stamp >= remote { continue }
      pull(key)
    }
  }

  private func syncKey(_ key: String) {
    switch latestIsRemote(key) {
    case true?: pull(key)
    case false?: pushKey(key)
    case nil: break
    }
  }

  /// `nil` when neither side has a stamp (the task is aborted).
  private func latestIsRemote(_ key: String) -> Bool? {
    switch (remoteStamp(key), localStamp(key)) {
    case (.some, nil): true
    case (nil, .some): false
    case (let remote?, let stamp?): !(stamp > remote)
    case (nil, nil): nil
    }
  }

  private func pushKey(_ key: String) {
    if let value = local.values[key] {
      store.setValue(.array([.date(clock.now), value]), forKey: key)
    } else {
      store.removeValue(forKey: key)
    }
    store.synchronize()
  }

  private func pull(_ key: String) {
    guard case .array(let pair)? = store.value(forKey: key), pair.count > 1 else { return }
    local.values[key] = pair[1]
    local.values[key + Self.stampSuffix] = .date(clock.now)
  }

  private func localStamp(_ key: String) -> Date? {
    if case .date(let date)? = local.values[key + Self.stampSuffix] { return date }
    return nil
  }

  private func remoteStamp(_ key: String) -> Date? {
    if case .array(let pair)? = store.value(forKey: key), case .date(let date)? = pair.first { return date }
    return nil
  }
}

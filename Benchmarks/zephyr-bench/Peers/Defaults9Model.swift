import Foundation
import Zephyr

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

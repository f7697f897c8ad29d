import Foundation

extension CloudKitStoreRuntime {
  /// The outcome of a sent batch. `CKSyncEngine` drops every change it sent, failed ones
  /// included, unless it retries them itself; the queue keeps each change until the
  /// server accepted it, so every failure is handed to the engine again:
  /// - saved: the server's new version is kept; the change leaves the queue unless a later
  ///   write replaced it meanwhile.
  /// - `serverRecordChanged`: the server's version becomes the key's value and is
  ///   reported as a `serverChange`; the coordinator merges it and writes the result.
  ///   A server version that is a foreign value (no Zephyr record) is not merged: a new
  ///   last-writer-wins record is sent again over it, naming it (see ``ForeignName``),
  ///   so every device that took the foreign value takes the record too; so is a
  ///   strategy record whose strategy cannot merge it (a value of the wrong type). A
  ///   record published again gives way to it (see `resendOverForeignValue`).
  /// - `quotaExceeded`: kept, reported as a `quotaViolation`, and held for a backoff that
  ///   doubles up to an hour (never retried in a loop).
  /// - `zoneNotFound`: the zone is created again and every value is sent again.
  /// - `unknownItem`: the record is gone; the value is saved as a new record.
  /// - a failed batch, a transient failure: kept and sent again.
  /// - a request too large, any other failure: kept, and held for the backoff.
  mutating func sent(_ sent: SentRecordChanges, now: Date) -> CloudKitEffects {
    var effects = CloudKitEffects()
    var changed: Set<String> = []
    var overQuota: [String] = []
    var holds = false
    for record in sent.saved {
      let name = record.recordName
      saved.server[name] = record
      confirm(name, CloudKitPayload.decode(record.payload))
      saved.quotaBackoff = CloudKitStoreState.initialQuotaBackoff
      if let change = saved.pending[name], change.sequence == inFlight[name] { saved.pending[name] = nil }
      inFlight[name] = nil
    }
    for name in sent.deleted {
      saved.server[name] = nil
      if let change = saved.pending[name], change.value == nil, change.sequence == inFlight[name] {
        saved.pending[name] = nil
      }
      inFlight[name] = nil
    }
    for failure in sent.failedSaves {
      let name = failure.record.recordName
      inFlight[name] = nil
      switch failure.error {
      case .serverRecordChanged(let server):
        if resendOverForeignValue(server) { continue }
        if adoptServerVersion(server, effects: &effects) { changed.insert(server.key) }
      case .quotaExceeded:
        overQuota.append(failure.record.key)
      case .zoneNotFound:
        zoneLost(effects: &effects)
      case .unknownItem:
        saved.server[name] = nil
      case .limitExceeded, .other:
        holds = true
      case .batchRequestFailed, .transient:
        break
      }
    }
    for failure in sent.failedDeletes {
      let name = failure.recordName
      inFlight[name] = nil
      switch failure.error {
      case .unknownItem, .zoneNotFound:
        // Gone already: the deletion is done.
        saved.server[name] = nil
        if saved.pending[name]?.value == nil { saved.pending[name] = nil }
        if failure.error == .zoneNotFound { zoneLost(effects: &effects) }
      case .quotaExceeded, .limitExceeded, .other:
        holds = true
      case .serverRecordChanged, .batchRequestFailed, .transient:
        break
      }
    }
    if !overQuota.isEmpty || holds { backOff(now: now) }
    if !overQuota.isEmpty {
      effects.notifications.append(ExternalChange(reason: .quotaViolation, keys: overQuota.sorted()))
    }
    if !changed.isEmpty {
      effects.notifications.append(ExternalChange(reason: .serverChange, keys: changed.sorted()))
    }
    return effects
  }

  /// When the server's version is a foreign value, the unsent change is sent again over
  /// it, as the key-value store would have written it over it. Returns whether it was.
  /// - A new last-writer-wins record names the foreign value (see ``ForeignName``). One
  ///   the server had before (published again after the store lost it) is no write made
  ///   over the foreign value: it gives way, and the foreign value is taken.
  /// - A strategy record is sent as it is when its strategy cannot merge the foreign
  ///   value (a string under a `.set` key): the edit replaces it. A value it can merge
  ///   (a number under `.max`) is taken as a server change instead, and merged.
  private mutating func resendOverForeignValue(_ server: MirrorRecord) -> Bool {
    let name = server.recordName
    guard let change = saved.pending[name], let record = change.value,
      case .foreign(let foreign)? = CloudKitPayload.decode(server.payload).map(RemoteState.init(storeValue:))
    else { return false }
    switch RemoteState(storeValue: record) {
    case .replica(let replica) where !replica.state.kind.canMerge(foreign):
      saved.server[name] = server
      return true
    // (At or below the generation the server confirmed, a record is a write the server
    // had, published again: it gives way to the foreign value, which the coordinator then
    // takes, as it does one it reads.)
    case .record(let written) where written.stamp.generation > saved.generations[name] ?? 0:
      guard let named = SyncRecord.stored(record, madeOver: ForeignName(of: foreign)) else { return false }
      saved.server[name] = server
      saved.pending[name]?.value = named
      values[change.key] = named
      return true
    default:
      return false
    }
  }

  /// The zone is gone, and every record in it: create it again, send everything again.
  private mutating func zoneLost(effects: inout CloudKitEffects) {
    guard !saved.needsZone || !saved.server.isEmpty else { return }
    saved.needsZone = true
    resendEverything()
  }

  /// Holds the queue until the backoff has passed, and doubles the next one.
  private mutating func backOff(now: Date) {
    guard saved.quotaRetryDate.map({ $0 <= now }) ?? true else { return }
    saved.quotaRetryDate = now.addingTimeInterval(saved.quotaBackoff)
    saved.quotaBackoff = min(saved.quotaBackoff * 2, CloudKitStoreState.maximumQuotaBackoff)
  }
}

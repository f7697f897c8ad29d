import Foundation

/// The core's state behind its lock: what is saved, plus what is rebuilt from it at
/// launch (the decoded values, which key holds which record name) or lives only while the
/// process does (the batch in flight, the keys a first fetch changed).
struct CloudKitStoreRuntime {
  var saved: CloudKitStoreState
  /// Every key's current value (``CloudKitStoreState/value(named:)``, decoded once);
  /// written by the runtime's extensions only.
  var values: [String: PropertyListValue] = [:]
  /// The key each record name stands for.
  private var keyOfName: [String: String] = [:]
  /// Per record name, the number of the change the batch in flight sent.
  var inFlight: [String: UInt64] = [:]
  /// The keys a fetch changed before the first fetch completed: reported together.
  private var firstFetchChanges: Set<String> = []

  init(saved: CloudKitStoreState) {
    self.saved = saved
    for (name, record) in saved.server {
      keyOfName[name] = record.key
      if let value = CloudKitPayload.decode(record.payload) { values[record.key] = value }
    }
    for (name, change) in saved.pending {
      keyOfName[name] = change.key
      values[change.key] = change.value
    }
  }

  // MARK: Local writes

  mutating func write(_ value: PropertyListValue?, forKey key: String, now: Date) -> CloudKitEffects {
    let name = CloudKitRecordName.name(for: key)
    var effects = CloudKitEffects()
    if let holder = keyOfName[name], holder != key {
      effects.notifications.append(ExternalChange(reason: .quotaViolation, keys: [key]))
      return effects
    }
    if let value, key.utf8.count + CloudKitPayload.encode(value).count > CloudKitStoreCore.maximumRecordBytes {
      effects.notifications.append(ExternalChange(reason: .quotaViolation, keys: [key]))
      return effects
    }
    keyOfName[name] = key
    values[key] = value
    if value == nil, saved.server[name] == nil {
      // Never on the server: dropping the unsent save is the whole deletion.
      if saved.pending.removeValue(forKey: name) != nil { effects.removed.append(.save(name)) }
      return effects
    }
    saved.sequence += 1
    saved.pending[name] = CloudKitStoreState.Pending(key: key, value: value, sequence: saved.sequence)
    // A save replaces a queued deletion and the other way round, so a deleted and
    // re-created key sends its last state, never only the deletion.
    let change: PendingRecordChange = value == nil ? .delete(name) : .save(name)
    effects.removed.append(value == nil ? .save(name) : .delete(name))
    if mayQueue(now: now) { effects.added.append(change) }
    return effects
  }

  // MARK: Sending

  /// Whether changes may be handed to the engine now.
  func mayQueue(now: Date) -> Bool {
    saved.hasFetched && !saved.pausedAfterPurge && saved.quotaRetryDate.map { now >= $0 } ?? true
  }

  /// Hands every change that may be sent now to the engine (the engine keeps no
  /// duplicates), and the zone save when the zone is to be created.
  mutating func release(now: Date) -> CloudKitEffects {
    var effects = CloudKitEffects()
    if let retry = saved.quotaRetryDate, now >= retry { saved.quotaRetryDate = nil }
    guard mayQueue(now: now) else { return effects }
    effects.zoneSave = saved.needsZone
    effects.added = saved.pendingChanges
    return effects
  }

  mutating func batch(
    from pending: [PendingRecordChange], limit: Int, now: Date
  ) -> (RecordChangeBatch?, CloudKitEffects) {
    var effects = CloudKitEffects()
    guard mayQueue(now: now) else {
      effects.removed = pending
      return (nil, effects)
    }
    var batch = RecordChangeBatch(saves: [], deletions: [], atomicByZone: false)
    for change in pending where batch.count < limit {
      let name = change.recordName
      guard let queued = saved.pending[name], (queued.value == nil) == (change == .delete(name)) else {
        effects.removed.append(change)  // stale: the queue no longer holds it
        continue
      }
      if let value = queued.value {
        let server = saved.server[name]
        batch.saves.append(
          MirrorRecord(
            recordName: name, key: queued.key, payload: CloudKitPayload.encode(value), changeTag: server?.changeTag,
            systemFields: server?.systemFields))
      } else {
        batch.deletions.append(name)
      }
      inFlight[name] = queued.sequence
    }
    return (batch.count == 0 ? nil : batch, effects)
  }

  // MARK: Events

  mutating func handle(_ event: CloudKitSyncEvent, now: Date) -> CloudKitEffects {
    switch event {
    case .stateUpdate(let serialization):
      saved.engineState = serialization
      return CloudKitEffects()
    case .accountChange(let kind):
      return changeAccount(kind)
    case .fetchedZoneDeletion(let reason):
      return zoneDeleted(reason, now: now)
    case .fetchedRecordZoneChanges(let modifications, let deletions):
      return fetched(modifications, deletions: deletions)
    case .sentZoneSave(let error):
      if error == nil { saved.needsZone = false }
      return CloudKitEffects()
    case .sentRecordZoneChanges(let sent):
      return self.sent(sent, now: now)
    case .didFetchChanges:
      return fetchCompleted()
    case .willFetchChanges, .willSendChanges, .didSendChanges:
      return CloudKitEffects()
    }
  }

  /// Sign-in, sign-out and switch: the store forgets the old account's records and queue
  /// (the app's `UserDefaults` values are the coordinator's, and stay), and sends
  /// nothing until the new account's first fetch, which reports `accountChange`. A
  /// sign-out reports it at once.
  private mutating func changeAccount(_ kind: AccountChangeKind) -> CloudKitEffects {
    var effects = CloudKitEffects()
    let before = Set(values.keys)
    effects.removed = saved.pendingChanges
    saved = CloudKitStoreState()
    values = [:]
    keyOfName = [:]
    inFlight = [:]
    if kind == .signOut {
      effects.notifications.append(ExternalChange(reason: .accountChange, keys: before.sorted()))
      firstFetchChanges = []
    } else {
      saved.reportsAccountChange = true
      firstFetchChanges = before
    }
    return effects
  }

  /// A purge (the user deleted the app's data in Settings): the store forgets its records
  /// and queue and sends nothing until the app resumes (Apple: do not send the data again);
  /// the `UserDefaults` values stay. A deleted zone or an encrypted-data reset: the zone
  /// is created again and every value this device holds is sent again.
  private mutating func zoneDeleted(_ reason: ZoneDeletionReason, now: Date) -> CloudKitEffects {
    var effects = CloudKitEffects()
    saved.needsZone = true
    let reset: StoreReset.Reason =
      switch reason {
      case .deleted: .zoneDeleted
      case .purged: .purged
      case .encryptedDataReset: .encryptedDataReset
      }
    saved.lastReset = StoreReset(reason: reset, date: now)
    guard reason == .purged else {
      resendEverything()
      return effects
    }
    effects.removed = saved.pendingChanges
    saved.server = [:]
    saved.pending = [:]
    values = [:]
    keyOfName = [:]
    inFlight = [:]
    saved.pausedAfterPurge = true
    return effects
  }

  /// The server lost every record: each value becomes an unsent save of a new record.
  mutating func resendEverything() {
    for (name, record) in saved.server where saved.pending[name] == nil {
      guard let value = values[record.key] else { continue }
      saved.sequence += 1
      saved.pending[name] = CloudKitStoreState.Pending(key: record.key, value: value, sequence: saved.sequence)
    }
    saved.server = [:]
    for (name, change) in saved.pending where change.value == nil { saved.pending[name] = nil }
  }

  private mutating func fetched(_ modifications: [MirrorRecord], deletions: [String]) -> CloudKitEffects {
    var effects = CloudKitEffects()
    var changed: Set<String> = []
    for record in modifications {
      let name = record.recordName
      guard name == CloudKitRecordName.name(for: record.key) else { continue }  // not Zephyr's
      if let tag = record.changeTag, saved.server[name]?.changeTag == tag { continue }  // seen: an echo
      if adoptServerVersion(record, effects: &effects) { changed.insert(record.key) }
    }
    for name in deletions {
      guard let key = saved.server.removeValue(forKey: name)?.key ?? keyOfName[name] else { continue }
      if let change = saved.pending[name] {
        // A queued save goes to a new record; a queued deletion is done.
        if change.value == nil { saved.pending[name] = nil }
        continue
      }
      if values.removeValue(forKey: key) != nil { changed.insert(key) }
    }
    if saved.hasFetched {
      if !changed.isEmpty {
        effects.notifications.append(ExternalChange(reason: .serverChange, keys: changed.sorted()))
      }
    } else {
      firstFetchChanges.formUnion(changed)
    }
    return effects
  }

  /// Makes `record` the key's value, dropping an unsent change of it (the coordinator
  /// merges the server's version and writes the result again). Returns whether the value
  /// changed.
  mutating func adoptServerVersion(_ record: MirrorRecord, effects: inout CloudKitEffects) -> Bool {
    let name = record.recordName
    saved.server[name] = record
    keyOfName[name] = record.key
    if let change = saved.pending.removeValue(forKey: name) {
      effects.removed.append(change.value == nil ? .delete(name) : .save(name))
    }
    let before = values[record.key]
    values[record.key] = CloudKitPayload.decode(record.payload)
    confirm(name, values[record.key])
    return before != values[record.key]
  }

  /// Notes the generation of a Zephyr record the server confirmed under `name` (see
  /// ``CloudKitStoreState/generations``).
  mutating func confirm(_ name: String, _ value: PropertyListValue?) {
    guard let generation = Self.generation(of: value), generation > saved.generations[name] ?? 0 else { return }
    saved.generations[name] = generation
  }

  /// The generation of a Zephyr record; `nil` for any other value.
  static func generation(of value: PropertyListValue?) -> UInt64? {
    switch RemoteState(storeValue: value) {
    case .record(let record): record.stamp.generation
    case .replica(let record): record.stamp.generation
    default: nil
    }
  }

  private mutating func fetchCompleted() -> CloudKitEffects {
    var effects = CloudKitEffects()
    guard !saved.hasFetched else { return effects }
    saved.hasFetched = true
    let reason: ExternalChange.Reason = saved.reportsAccountChange ? .accountChange : .initialSync
    saved.reportsAccountChange = false
    effects.notifications.append(ExternalChange(reason: reason, keys: firstFetchChanges.sorted()))
    firstFetchChanges = []
    return effects
  }
}

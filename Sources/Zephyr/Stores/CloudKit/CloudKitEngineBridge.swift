#if canImport(CloudKit)
  import CloudKit
  import Foundation

  /// `CKSyncEngine`'s delegate and the core's engine: maps CloudKit's types to the mirror
  /// types and back, and nothing else.
  final class CloudKitEngineBridge: CKSyncEngineDelegate, CloudKitSyncEngineDriver {
    private let parts = Locked<(engine: CKSyncEngine, core: CloudKitStoreCore)?>(nil)
    private let retryScheduled = Locked(false)
    static let zoneID = CKRecordZone.ID(zoneName: CloudKitSchema.zoneName)

    /// Creates the engine from the state the core saved, then hands it the core's queue.
    func start(core: CloudKitStoreCore, database: CKDatabase) {
      let serialization = core.engineState.flatMap {
        try? JSONDecoder().decode(CKSyncEngine.State.Serialization.self, from: $0)
      }
      let engine = CKSyncEngine(
        CKSyncEngine.Configuration(database: database, stateSerialization: serialization, delegate: self))
      parts.withLock { $0 = (engine, core) }
      core.synchronize()
    }

    private var engine: CKSyncEngine? { parts.withLock { $0?.engine } }
    private var core: CloudKitStoreCore? { parts.withLock { $0?.core } }

    // MARK: CloudKitSyncEngineDriver

    func add(_ changes: [PendingRecordChange]) {
      engine?.state.add(pendingRecordZoneChanges: changes.map(Self.pending))
    }

    func remove(_ changes: [PendingRecordChange]) {
      engine?.state.remove(pendingRecordZoneChanges: changes.map(Self.pending))
    }

    func addZoneSave() {
      engine?.state.add(pendingDatabaseChanges: [.saveZone(CKRecordZone(zoneID: Self.zoneID))])
    }

    private static func pending(_ change: PendingRecordChange) -> CKSyncEngine.PendingRecordZoneChange {
      switch change {
      case .save(let name): .saveRecord(CKRecord.ID(recordName: name, zoneID: zoneID))
      case .delete(let name): .deleteRecord(CKRecord.ID(recordName: name, zoneID: zoneID))
      }
    }

    // MARK: CKSyncEngineDelegate

    func handleEvent(_ event: CKSyncEngine.Event, syncEngine: CKSyncEngine) async {
      guard let core else { return }
      for mirrored in Self.mirror(event) { core.handle(mirrored) }
      scheduleQuotaRetry(core)
    }

    func nextRecordZoneChangeBatch(
      _ context: CKSyncEngine.SendChangesContext, syncEngine: CKSyncEngine
    ) async -> CKSyncEngine.RecordZoneChangeBatch? {
      guard let core else { return nil }
      let pending = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
      let mirrored: [PendingRecordChange] = pending.compactMap { change in
        switch change {
        case .saveRecord(let id) where id.zoneID == Self.zoneID: .save(id.recordName)
        case .deleteRecord(let id) where id.zoneID == Self.zoneID: .delete(id.recordName)
        default: nil
        }
      }
      guard let batch = core.nextBatch(from: mirrored) else { return nil }
      return CKSyncEngine.RecordZoneChangeBatch(
        recordsToSave: batch.saves.map(CloudKitRecordMapping.record),
        recordIDsToDelete: batch.deletions.map { CKRecord.ID(recordName: $0, zoneID: Self.zoneID) },
        atomicByZone: batch.atomicByZone)
    }

    /// While the account is full, the queue waits for the backoff; then it is handed to
    /// the engine again.
    private func scheduleQuotaRetry(_ core: CloudKitStoreCore) {
      guard let retry = core.currentState.quotaRetryDate else { return }
      guard
        retryScheduled.withLock({ scheduled in
          defer { scheduled = true }
          return !scheduled
        })
      else { return }
      let delay = max(0, retry.timeIntervalSinceNow)
      Task { [retryScheduled] in
        try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
        retryScheduled.withLock { $0 = false }
        core.synchronize()
      }
    }

    // MARK: Events

    static func mirror(_ event: CKSyncEngine.Event) -> [CloudKitSyncEvent] {
      switch event {
      case .stateUpdate(let update):
        guard let data = try? JSONEncoder().encode(update.stateSerialization) else { return [] }
        return [.stateUpdate(data)]
      case .accountChange(let change):
        switch change.changeType {
        case .signIn: return [.accountChange(.signIn)]
        case .signOut: return [.accountChange(.signOut)]
        case .switchAccounts: return [.accountChange(.switchAccounts)]
        @unknown default: return [.accountChange(.switchAccounts)]
        }
      case .fetchedDatabaseChanges(let changes):
        return changes.deletions.filter { $0.zoneID == zoneID }.map { deletion in
          switch deletion.reason {
          case .purged: .fetchedZoneDeletion(.purged)
          case .encryptedDataReset: .fetchedZoneDeletion(.encryptedDataReset)
          case .deleted: .fetchedZoneDeletion(.deleted)
          @unknown default: .fetchedZoneDeletion(.deleted)
          }
        }
      case .fetchedRecordZoneChanges(let changes):
        let modifications = changes.modifications.map(\.record).filter { $0.recordID.zoneID == zoneID }
          .compactMap(CloudKitRecordMapping.mirror)
        let deletions = changes.deletions.map(\.recordID).filter { $0.zoneID == zoneID }.map(\.recordName)
        return [.fetchedRecordZoneChanges(modifications: modifications, deletions: deletions)]
      case .sentDatabaseChanges(let sent):
        if sent.savedZones.contains(where: { $0.zoneID == zoneID }) { return [.sentZoneSave(nil)] }
        guard let failure = sent.failedZoneSaves.first(where: { $0.zone.zoneID == zoneID }) else { return [] }
        return [.sentZoneSave(CloudKitRecordMapping.mirror(failure.error))]
      case .sentRecordZoneChanges(let sent):
        return [.sentRecordZoneChanges(sentChanges(sent))]
      case .willFetchChanges: return [.willFetchChanges]
      case .didFetchChanges: return [.didFetchChanges]
      case .willSendChanges: return [.willSendChanges]
      case .didSendChanges: return [.didSendChanges]
      case .willFetchRecordZoneChanges, .didFetchRecordZoneChanges: return []
      @unknown default: return []
      }
    }

    private static func sentChanges(_ sent: CKSyncEngine.Event.SentRecordZoneChanges) -> SentRecordChanges {
      var result = SentRecordChanges()
      result.saved = sent.savedRecords.filter { $0.recordID.zoneID == zoneID }.compactMap(CloudKitRecordMapping.mirror)
      result.deleted = sent.deletedRecordIDs.filter { $0.zoneID == zoneID }.map(\.recordName)
      for failure in sent.failedRecordSaves where failure.record.recordID.zoneID == zoneID {
        guard let record = CloudKitRecordMapping.mirror(failure.record) else { continue }
        result.failedSaves.append(.init(record: record, error: CloudKitRecordMapping.mirror(failure.error)))
      }
      for (id, error) in sent.failedRecordDeletes where id.zoneID == zoneID {
        result.failedDeletes.append(.init(recordName: id.recordName, error: CloudKitRecordMapping.mirror(error)))
      }
      return result
    }
  }
#endif

import Foundation

/// What a sync engine tells the store, in order (`CKSyncEngine.Event`). The store handles
/// each one, and saves its state, before it returns.
package enum CloudKitSyncEvent: Sendable, Hashable {
  /// The engine's state changed: keep its serialization
  /// (`CKSyncEngine.State.Serialization`) with the store's state.
  case stateUpdate(Data)
  /// The account changed.
  case accountChange(AccountChangeKind)
  /// Zones were deleted on the server (the Zephyr zone's deletion, with its reason).
  case fetchedZoneDeletion(ZoneDeletionReason)
  /// Records changed on the server: their current versions, and the names of deleted ones.
  case fetchedRecordZoneChanges(modifications: [MirrorRecord], deletions: [String])
  /// A zone save was sent: `nil` when it succeeded, else why it failed.
  case sentZoneSave(MirrorError?)
  /// A batch of record changes was sent.
  case sentRecordZoneChanges(SentRecordChanges)
  /// A fetch starts (`willFetchChanges`).
  case willFetchChanges
  /// A fetch finished (`didFetchChanges`).
  case didFetchChanges
  /// A send starts (`willSendChanges`).
  case willSendChanges
  /// A send finished (`didSendChanges`).
  case didSendChanges
}

/// The outcome of one sent batch (`CKSyncEngine.Event.SentRecordZoneChanges`).
package struct SentRecordChanges: Sendable, Hashable {
  /// The saved records, with their new change tags.
  package var saved: [MirrorRecord] = []
  /// The records whose save failed, and why.
  package var failedSaves: [FailedSave] = []
  /// The names of the deleted records.
  package var deleted: [String] = []
  /// The names of the records whose deletion failed, and why.
  package var failedDeletes: [FailedDelete] = []

  package init(
    saved: [MirrorRecord] = [], failedSaves: [FailedSave] = [], deleted: [String] = [],
    failedDeletes: [FailedDelete] = []
  ) {
    self.saved = saved
    self.failedSaves = failedSaves
    self.deleted = deleted
    self.failedDeletes = failedDeletes
  }

  /// A save that failed.
  package struct FailedSave: Sendable, Hashable {
    package var record: MirrorRecord
    package var error: MirrorError
    package init(record: MirrorRecord, error: MirrorError) {
      self.record = record
      self.error = error
    }
  }

  /// A deletion that failed.
  package struct FailedDelete: Sendable, Hashable {
    package var recordName: String
    package var error: MirrorError
    package init(recordName: String, error: MirrorError) {
      self.recordName = recordName
      self.error = error
    }
  }
}

/// The records and deletions the store gives the engine to send
/// (`CKSyncEngine.RecordZoneChangeBatch`).
package struct RecordChangeBatch: Sendable, Hashable {
  /// Records to save, each with the change tag of the version it starts from.
  package var saves: [MirrorRecord]
  /// Names of records to delete.
  package var deletions: [String]
  /// Whether the server applies the whole batch or none of it (`atomicByZone`).
  package var atomicByZone: Bool

  package var count: Int { saves.count + deletions.count }
}

/// What the store asks of the sync engine (`CKSyncEngine.State`): the pending changes it
/// is to send. Called with no lock held.
package protocol CloudKitSyncEngineDriver: AnyObject, Sendable {
  /// Adds changes to the engine's pending list; changes already there are not repeated.
  func add(_ changes: [PendingRecordChange])
  /// Removes changes from the engine's pending list.
  func remove(_ changes: [PendingRecordChange])
  /// Adds a save of the Zephyr zone to the engine's pending database changes.
  func addZoneSave()
}

import Foundation

// The library's own mirrors of CloudKit's types, so that the CloudKit store's core is
// plain Swift, tested on Linux; `CloudKitStore` maps them to `CKRecord`, `CKError` and
// `CKSyncEngine` on Apple platforms.

/// The one custom zone Zephyr keeps its records in, and the record type of each key's
/// record (`CKRecordZone.ID`, `CKRecord.recordType`).
package enum CloudKitSchema {
  /// The custom zone's name.
  package static let zoneName = "Zephyr"
  /// The record type of a key's record.
  package static let recordType = "ZephyrKey"
  /// The record field holding the key's name (plain: it names no value).
  package static let keyField = "key"
  /// The encrypted record field holding the merge record's bytes.
  package static let payloadField = "record"
}

/// A key's record, as CloudKit holds it (a `CKRecord` of ``CloudKitSchema/recordType`` in
/// the Zephyr zone): its name, the key it stands for, the merge record as bytes, and the
/// server's change tag of the version it is (`nil`: never saved, as a record built for a
/// first save).
package struct MirrorRecord: Sendable, Hashable {
  /// The record name (see ``CloudKitRecordName``).
  package var recordName: String
  /// The key's name.
  package var key: String
  /// The merge record, encoded by ``CloudKitPayload``.
  package var payload: Data
  /// The server's version of the record; `nil` for a record the server has not seen.
  package var changeTag: String?
  /// The record's system fields as CloudKit archives them (`encodeSystemFields(with:)`),
  /// which a save of the next version starts from; opaque to the core, `nil` in the
  /// simulation.
  package var systemFields: Data?

  package init(recordName: String, key: String, payload: Data, changeTag: String?, systemFields: Data? = nil) {
    self.recordName = recordName
    self.key = key
    self.payload = payload
    self.changeTag = changeTag
    self.systemFields = systemFields
  }
}

/// A change the sync engine is to send (`CKSyncEngine.PendingRecordZoneChange`).
package enum PendingRecordChange: Sendable, Hashable {
  /// Save the record of this name.
  case save(String)
  /// Delete the record of this name.
  case delete(String)

  /// The record name.
  package var recordName: String {
    switch self {
    case .save(let name), .delete(let name): name
    }
  }
}

/// Why a save or delete failed, as far as the store tells errors apart (`CKError.Code`).
package enum MirrorError: Sendable, Hashable {
  /// The server holds a version the save did not start from; it carries that version
  /// (`.serverRecordChanged`, with `serverRecord`).
  case serverRecordChanged(MirrorRecord)
  /// The user's iCloud storage is full (`.quotaExceeded`).
  case quotaExceeded
  /// The zone is gone (`.zoneNotFound`, `.userDeletedZone`).
  case zoneNotFound
  /// The record is gone from the server (`.unknownItem`).
  case unknownItem
  /// Another change of an atomic batch failed, so this one was not applied
  /// (`.batchRequestFailed`).
  case batchRequestFailed
  /// The request or a record is too large (`.limitExceeded`).
  case limitExceeded
  /// A transient failure the engine retries itself: no network, service busy, rate
  /// limited, zone busy, not authenticated (`.networkFailure`, `.networkUnavailable`,
  /// `.serviceUnavailable`, `.requestRateLimited`, `.zoneBusy`, `.notAuthenticated`).
  case transient
  /// Any other failure (its `CKError.Code` raw value).
  case other(Int)
}

/// Why the Zephyr zone was deleted (`CKSyncEngine.Event.FetchedDatabaseChanges`'s
/// deletion reasons).
package enum ZoneDeletionReason: Sendable, Hashable {
  /// An app (another version of this one, a tool) deleted the zone.
  case deleted
  /// The user deleted the app's data in Settings: Apple asks that it is not sent again.
  case purged
  /// The user reset their encrypted data: Apple suggests sending local data again.
  case encryptedDataReset
}

/// An account change (`CKSyncEngine.Event.AccountChange.ChangeType`).
package enum AccountChangeKind: Sendable, Hashable {
  /// The device signed into an account.
  case signIn
  /// The device signed out.
  case signOut
  /// The device signed out of one account and into another.
  case switchAccounts
}

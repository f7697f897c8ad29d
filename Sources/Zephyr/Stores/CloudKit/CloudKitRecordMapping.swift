#if canImport(CloudKit)
  import CloudKit
  import Foundation

  /// `CKRecord` and `CKError` to and from the mirror types.
  enum CloudKitRecordMapping {
    /// The record to save for `mirror`: built on its system fields (the version it starts
    /// from) when it has them, else a new record.
    static func record(_ mirror: MirrorRecord) -> CKRecord {
      let id = CKRecord.ID(recordName: mirror.recordName, zoneID: CloudKitEngineBridge.zoneID)
      let record =
        mirror.systemFields.flatMap(unarchive) ?? CKRecord(recordType: CloudKitSchema.recordType, recordID: id)
      record[CloudKitSchema.keyField] = mirror.key as NSString
      record.encryptedValues[CloudKitSchema.payloadField] = mirror.payload as NSData
      return record
    }

    /// The mirror of a record of Zephyr's zone, or `nil` for a record that is not a key's.
    static func mirror(_ record: CKRecord) -> MirrorRecord? {
      guard record.recordType == CloudKitSchema.recordType,
        let key = record[CloudKitSchema.keyField] as? String,
        let payload = record.encryptedValues[CloudKitSchema.payloadField] as? Data
      else { return nil }
      return MirrorRecord(
        recordName: record.recordID.recordName, key: key, payload: payload, changeTag: record.recordChangeTag,
        systemFields: archive(record))
    }

    static func mirror(_ error: CKError) -> MirrorError {
      switch error.code {
      case .serverRecordChanged:
        guard let server = error.serverRecord.flatMap(mirror) else { return .transient }
        return .serverRecordChanged(server)
      case .quotaExceeded: return .quotaExceeded
      case .zoneNotFound, .userDeletedZone: return .zoneNotFound
      case .unknownItem: return .unknownItem
      case .batchRequestFailed: return .batchRequestFailed
      case .limitExceeded: return .limitExceeded
      case .networkFailure, .networkUnavailable, .serviceUnavailable, .requestRateLimited, .zoneBusy,
        .notAuthenticated, .accountTemporarilyUnavailable:
        return .transient
      default: return .other(error.code.rawValue)
      }
    }

    private static func archive(_ record: CKRecord) -> Data {
      let coder = NSKeyedArchiver(requiringSecureCoding: true)
      record.encodeSystemFields(with: coder)
      coder.finishEncoding()
      return coder.encodedData
    }

    private static func unarchive(_ data: Data) -> CKRecord? {
      guard let coder = try? NSKeyedUnarchiver(forReadingFrom: data) else { return nil }
      coder.requiresSecureCoding = true
      defer { coder.finishDecoding() }
      return CKRecord(coder: coder)
    }
  }
#endif

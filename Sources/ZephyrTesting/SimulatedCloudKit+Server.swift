import Foundation
import Zephyr

/// One account's private database as `SimulatedCloudKit` models it: the Zephyr zone, its
/// records with change tags, and a change log that fetches read from a token.
struct CloudKitServer {
  struct Stored {
    var record: MirrorRecord
    /// The change number that wrote this version.
    var sequence: UInt64
    /// The device that saved it (`nil`: a foreign writer).
    var writer: String?
  }

  var zoneExists = false
  /// Bumped by every zone deletion: a token of an earlier incarnation reads the deletion.
  var incarnation = 0
  var lastDeletion: ZoneDeletionReason?
  var records: [String: Stored] = [:]
  /// Deleted record names and the change number of their deletion.
  var deletions: [String: UInt64] = [:]
  var sequence: UInt64 = 0
  private var tags: UInt64 = 0

  /// Bytes the account's records use: key and payload bytes.
  var usedBytes: Int { records.values.reduce(0) { $0 + $1.record.key.utf8.count + $1.record.payload.count } }

  mutating func nextTag() -> String {
    tags += 1
    return "t\(tags)"
  }

  /// Stores a new version of `record` and returns it with its new tag.
  mutating func store(_ record: MirrorRecord, writer: String?) -> MirrorRecord {
    var version = record
    version.changeTag = nextTag()
    sequence += 1
    records[record.recordName] = Stored(record: version, sequence: sequence, writer: writer)
    deletions[record.recordName] = nil
    return version
  }

  mutating func delete(_ name: String) {
    guard records.removeValue(forKey: name) != nil else { return }
    sequence += 1
    deletions[name] = sequence
  }

  mutating func deleteZone(reason: ZoneDeletionReason) {
    zoneExists = false
    records = [:]
    deletions = [:]
    incarnation += 1
    lastDeletion = reason
  }

  /// Applies a batch by CloudKit's rules: change tags, 1 MB a record, quota, zone, and
  /// (for an atomic batch) all or nothing.
  mutating func apply(
    _ batch: RecordChangeBatch, writer: String, quota: Int?, atomic: Bool, fault: SimulatedCloudKit.Fault?
  ) -> SentRecordChanges {
    var result = SentRecordChanges()
    var trial = self
    for save in batch.saves {
      if let error = trial.refusal(of: save, quota: quota, fault: fault) {
        result.failedSaves.append(.init(record: save, error: error))
      } else {
        result.saved.append(trial.store(save, writer: writer))
      }
    }
    for name in batch.deletions {
      if !trial.zoneExists {
        result.failedDeletes.append(.init(recordName: name, error: .zoneNotFound))
      } else {
        trial.delete(name)
        result.deleted.append(name)
      }
    }
    let failed = !result.failedSaves.isEmpty || !result.failedDeletes.isEmpty
    guard atomic, failed else {
      self = trial
      return result
    }
    // All or nothing: the others fail with batchRequestFailed and nothing is applied.
    let failedNames = Set(result.failedSaves.map(\.record.recordName) + result.failedDeletes.map(\.recordName))
    var atomicResult = SentRecordChanges()
    atomicResult.failedSaves = batch.saves.map { save in
      result.failedSaves.first { $0.record.recordName == save.recordName }
        ?? .init(record: save, error: .batchRequestFailed)
    }
    atomicResult.failedDeletes = batch.deletions.map { name in
      failedNames.contains(name)
        ? result.failedDeletes.first { $0.recordName == name } ?? .init(recordName: name, error: .batchRequestFailed)
        : .init(recordName: name, error: .batchRequestFailed)
    }
    return atomicResult
  }

  private func refusal(of save: MirrorRecord, quota: Int?, fault: SimulatedCloudKit.Fault?) -> MirrorError? {
    guard zoneExists else { return .zoneNotFound }
    if fault == .quotaExceeded { return .quotaExceeded }
    if save.key.utf8.count + save.payload.count > CloudKitStoreCore.maximumRecordBytes { return .limitExceeded }
    let existing = records[save.recordName]
    if let existing, existing.record.changeTag != save.changeTag { return .serverRecordChanged(existing.record) }
    if existing == nil, save.changeTag != nil { return .unknownItem }
    if let quota {
      let size = save.key.utf8.count + save.payload.count
      let old = existing.map { $0.record.key.utf8.count + $0.record.payload.count } ?? 0
      if usedBytes - old + size > quota { return .quotaExceeded }
    }
    return nil
  }

  /// What changed since `token` (a change number in this incarnation): the current
  /// versions of changed records (without `device`'s own saves unless `echo`), in change
  /// order, and deleted names.
  func changes(since token: UInt64, for device: String, echo: Bool) -> ([MirrorRecord], [String]) {
    let modified = records.values.filter { $0.sequence > token && (echo || $0.writer != device) }
      .sorted { $0.sequence < $1.sequence }.map(\.record)
    let deleted = deletions.filter { $0.value > token }.sorted { $0.value < $1.value }.map(\.key)
    return (modified, deleted)
  }
}

import Foundation

/// One design under one ``CollectionWorkload``: a row of the `collections` section.
struct CollectionRow: Codable, Equatable {
  var design: String
  var workload: String
  var ids: Int
  var recordBytes: Int
  /// ``recordBytes`` over the hand-rolled blob of the very elements the record holds
  /// (the hand-rolled design's own record lost some: the last writer won).
  var recordOverSameElementsBlob: Double?
  var storeWritesPerEdit: Double
  var insertMilliseconds: Double
  var batchPushMilliseconds: Double
  var insertWithPushShareMilliseconds: Double
  /// The ids the other device marked (one edit) for each inbound change.
  var inboundIDs: Int
  /// The inbound change handled, until the device has written its value.
  var inboundMilliseconds: Double
  /// One mark as an app makes it: one id inserted, then pushed on its own
  /// (`waitForPendingLocalEdits()`); `nil` when the workload makes none.
  var markWithPushMilliseconds: Double?
  /// One `UserDefaults.object(forKey:)` of the key's value on this platform, and how many
  /// an inbound change made, counted (the engine: one, just before writing, when the
  /// local value is the agreed one, so that an edit made meanwhile is not overwritten;
  /// the hand-rolled blob: none, it trusts its copy in memory). On Linux a `Data` comes
  /// out of `UserDefaults` copied byte by byte.
  var defaultsReadMilliseconds: Double
  var defaultsReadsPerInbound: Double
  /// ``inboundMilliseconds`` less those reads.
  var inboundBeyondReadsMilliseconds: Double
  var readMilliseconds: Double
  var marksLost: Int
  var removalsUndone: Int
  var roundsToAgree: [Int]
  /// Ids of the history a capacity trimmed, and whether every kept one came from an edit
  /// no older than every trimmed one.
  var trimmed: Int
  var trimKeepsNewestEdits: Bool
  /// The medians the ratios to the hand-rolled blob are computed from; not in the JSON.
  var insertNanosecondsMedian: Double = 0
  var insertWithPushNanoseconds: Double = 0
  var inboundNanosecondsMedian: Double = 0
  var inboundBeyondReadsNanoseconds: Double = 0
  var markWithPushNanoseconds: Double = 0
  /// Set by ``CollectionsBench`` against the group's hand-rolled blob.
  var insertOverHandRolled: Double? = nil
  var insertWithPushOverHandRolled: Double? = nil
  var inboundOverHandRolled: Double? = nil
  var inboundBeyondReadsOverHandRolled: Double? = nil
  var markWithPushOverHandRolled: Double? = nil

  enum CodingKeys: String, CodingKey {
    case design, workload, ids
    case recordBytes = "record_bytes"
    case recordOverSameElementsBlob = "record_over_same_elements_blob"
    case storeWritesPerEdit = "store_writes_per_edit"
    case insertMilliseconds = "insert_ms"
    case batchPushMilliseconds = "batch_push_ms"
    case insertWithPushShareMilliseconds = "insert_with_push_share_ms"
    case inboundIDs = "inbound_ids"
    case inboundMilliseconds = "inbound_ms"
    case markWithPushMilliseconds = "mark_with_push_ms"
    case defaultsReadMilliseconds = "defaults_read_ms"
    case defaultsReadsPerInbound = "defaults_reads_per_inbound"
    case inboundBeyondReadsMilliseconds = "inbound_beyond_defaults_reads_ms"
    case readMilliseconds = "read_ms"
    case marksLost = "marks_lost"
    case removalsUndone = "removals_undone"
    case roundsToAgree = "rounds_to_agree"
    case trimmed
    case trimKeepsNewestEdits = "trim_keeps_newest_edits"
    case insertOverHandRolled = "insert_over_handrolled"
    case insertWithPushOverHandRolled = "insert_with_push_over_handrolled"
    case inboundOverHandRolled = "inbound_over_handrolled"
    case inboundBeyondReadsOverHandRolled = "inbound_beyond_defaults_reads_over_handrolled"
    case markWithPushOverHandRolled = "mark_with_push_over_handrolled"
  }
}

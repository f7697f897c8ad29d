import Foundation

/// One design's entry in the `peers` report: its ``PeerTally`` summed over the scenarios,
/// under the JSON names ``PeerComparison`` documents.
struct PeerReport: Codable, Equatable {
  var design: String
  var scenarios: Int
  var edits: Int
  var editsPushed: Int
  var editsSupersededByOwnEdit: Int
  var removalsOfAbsentKeys: Int
  var overwrittenBeforePush: Int
  var overwrittenCausallyLater: Int
  var yieldedToCloudHistory: Int
  var yieldedCausallyLater: Int
  var replacedAtRelaunch: Int
  var replacedAtRelaunchCausallyLater: Int
  var editsNeverPushed: Int
  var lostWrites: Int
  var lostWritesConverged: Int
  var resurrectedDeletes: Int
  var notConverged: Int
  var storeWritesPerEdit: Double
  var bytesPerEdit: Double
  var synchronizeCallsPerEdit: Double
  var extraStoreKeys: Int

  enum CodingKeys: String, CodingKey {
    case design, scenarios, edits
    case editsPushed = "edits_pushed"
    case editsSupersededByOwnEdit = "edits_superseded_by_own_edit"
    case removalsOfAbsentKeys = "removals_of_absent_keys"
    case overwrittenBeforePush = "overwritten_before_push"
    case overwrittenCausallyLater = "overwritten_causally_later"
    case yieldedToCloudHistory = "yielded_to_cloud_history"
    case yieldedCausallyLater = "yielded_causally_later"
    case replacedAtRelaunch = "replaced_at_relaunch"
    case replacedAtRelaunchCausallyLater = "replaced_at_relaunch_causally_later"
    case editsNeverPushed = "edits_never_pushed"
    case lostWrites = "lost_writes"
    case lostWritesConverged = "lost_writes_converged"
    case resurrectedDeletes = "resurrected_deletes"
    case notConverged = "not_converged"
    case storeWritesPerEdit = "store_writes_per_edit"
    case bytesPerEdit = "bytes_per_edit"
    case synchronizeCallsPerEdit = "synchronize_calls_per_edit"
    case extraStoreKeys = "extra_store_keys"
  }

  /// `total`, a design's tally over `scenarios` scenarios; the per-edit figures to two
  /// decimals.
  init(design: PeerDesign, total: PeerTally, scenarios: Int) {
    func perEdit(_ amount: Int) -> Double {
      total.edits > 0 ? (Double(amount) / Double(total.edits) * 100).rounded() / 100 : 0
    }
    self.design = design.rawValue
    self.scenarios = scenarios
    edits = total.edits
    editsPushed = total.pushed
    editsSupersededByOwnEdit = total.supersededByOwnEdit
    removalsOfAbsentKeys = total.removalsOfAbsentKeys
    overwrittenBeforePush = total.overwrittenBeforePush
    overwrittenCausallyLater = total.overwrittenCausallyLater
    yieldedToCloudHistory = total.yieldedToCloudHistory
    yieldedCausallyLater = total.yieldedCausallyLater
    replacedAtRelaunch = total.replacedAtRelaunch
    replacedAtRelaunchCausallyLater = total.relaunchCausallyLater
    editsNeverPushed = total.neverPushed
    lostWrites = total.lostWrites
    lostWritesConverged = total.lostWritesConverged
    resurrectedDeletes = total.resurrectedDeletes
    notConverged = total.notConverged
    storeWritesPerEdit = perEdit(total.storeWrites)
    bytesPerEdit = perEdit(total.bytes)
    synchronizeCallsPerEdit = perEdit(total.synchronizeCalls)
    extraStoreKeys = total.extraStoreKeys
  }
}

/// The JSON the benchmark prints: pretty, keys sorted.
enum BenchJSON {
  static func text(_ report: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    guard let data = try? encoder.encode(report) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
  }
}

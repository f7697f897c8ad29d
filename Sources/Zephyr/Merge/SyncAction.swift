import Foundation

/// The outcome of reconciling one key: a value, not a side effect.
enum SyncAction: Sendable, Equatable {
  /// Why a push or pull happens, for the decision log.
  enum Reason: String, Sendable {
    case localEdit = "local edit"
    case firstUpload = "first upload"
    case absentFromStore = "absent from store"
    case storeLostWrite = "store lost our write"
    case conflictLocalWins = "conflict, local wins"
    case conflictRemoteWins = "conflict, remote wins"
    case resolverMerged = "conflict, resolver merged"
    case remoteNewer = "remote newer"
    case remoteDiffers = "same generation, other value: remote wins"
    case cloudHistory = "cloud history beats never-synced device"
    case foreignWrite = "foreign write"
    case mergedByStrategy = "merged by strategy"
    case upgradedRecord = "record upgraded to the state format"
    case trimmedToCapacity = "trimmed to the set's capacity"

    /// Whether the pushed value is new to this device too, and is written locally.
    var writesLocally: Bool { self == .resolverMerged }
  }

  /// Nothing to do, and no store write.
  case none
  /// Write `value` to the store as this device's write at `generation`, a tombstone when
  /// `value` is `nil` (and write it locally too, for a resolver's merged value); made over
  /// the foreign value `over` names, when it was (see ``ForeignName``).
  case push(generation: UInt64, value: PropertyListValue?, reason: Reason, over: [ForeignName] = [])
  /// Write the agreed state to the store again, under its own stamp (an agreed foreign
  /// value under this device's), naming what the agreed state names: the store lost it.
  case republish(stamp: Stamp, value: PropertyListValue?, reason: Reason, over: [ForeignName] = [])
  /// Apply the store's content locally; the ledger takes the record's stamp and the
  /// foreign value it names.
  case pull(stamp: Stamp, content: SyncRecord.Content, reason: Reason, over: [ForeignName] = [])
  /// Both sides already hold the same state: the ledger takes `stamp` and the foreign
  /// value the store's record names, no write.
  case adopt(stamp: Stamp, over: [ForeignName] = [])
  /// Leave the key alone and report why.
  case skip(reason: String)
  /// A key merged by a strategy: hold the joined state, and write what the store or
  /// `UserDefaults` lacks of it.
  case merge(StrategyMerge)
}

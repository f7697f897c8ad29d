import Foundation

/// The local ledger: per synced key, the state both sides last agreed on.
///
/// The ledger lives outside the synced domain, in a file written atomically. It carries
/// an `epoch` that is also written into the `UserDefaults` domain: when the two differ
/// (the domain was reset, or restored without the ledger), the ledger is discarded, so a
/// wiped domain degrades to "no history" and pulls from the cloud instead of pushing
/// deletes for every key it no longer has.
struct Ledger: Sendable, Equatable {
  var epoch: String
  var entries: [String: LedgerEntry] = [:]
  /// This device's Lamport clock: the highest generation it has written or read, on any
  /// key. Its next write is numbered above it, so a write made after seeing another
  /// device's write (of any key) is ordered after that device's earlier writes.
  var clock: UInt64 = 0
  /// This copy of the ledger's own id, new whenever the ledger starts over (a new
  /// domain, a lost, damaged or discarded file, an account change). Strategy keys number
  /// their writes under the device id and this (``EngineState/replicaID``), so a device
  /// that lost its history never writes under a name whose earlier writes it no longer
  /// knows of.
  var incarnation: String = EngineState.randomID(length: 4)

  subscript(key: String) -> LedgerEntry? {
    get { entries[key] }
    set { entries[key] = newValue }
  }
}

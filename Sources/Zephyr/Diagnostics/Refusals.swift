import Foundation

/// The keys Zephyr left alone, with the reason: what ``SyncStatus/refusedKeys`` shows.
///
/// Two kinds of refusal live here, and leave differently:
/// - the engine's (a key too long, a record too large, a store record it cannot read),
///   lifted once a batch handles the key without refusing it again;
/// - a typed write's (``RefusalReason/unencodable(_:)``,
///   ``RefusalReason/undecodableLocalValue(_:)``), kept until a typed write of the key
///   succeeds, whatever batches run meanwhile.
///
/// A key shows its latest refusal: an engine refusal made after a typed one shows until
/// it is lifted, and the typed one shows again; a typed refusal replaces the engine's.
struct Refusals: Sendable, Equatable {
  private var engine: [String: RefusalReason] = [:]
  private var typed: [String: RefusalReason] = [:]

  /// The reason shown for `key`, if it is refused.
  subscript(key: String) -> RefusalReason? { engine[key] ?? typed[key] }

  /// Every refused key with the reason shown for it.
  var all: [String: RefusalReason] { typed.merging(engine) { _, engine in engine } }

  /// Whether the engine lists `key` as refused (a typed write's refusal aside).
  func isEngineRefusal(of key: String) -> Bool { engine[key] != nil }

  /// The engine left `key` alone for `reason`.
  mutating func refuse(_ key: String, _ reason: RefusalReason) {
    engine[key] = reason
  }

  /// A batch handled `key` without refusing it: its engine refusal is lifted (a refused
  /// typed write of it stays).
  mutating func lift(_ key: String) {
    engine[key] = nil
  }

  /// Lists a typed write of `key` refused for `reason`; returns whether the key showed
  /// another reason (or none) before, to be logged.
  mutating func refuseTypedWrite(of key: String, _ reason: RefusalReason) -> Bool {
    let isNew = self[key] != reason
    engine[key] = nil
    typed[key] = reason
    return isNew
  }

  /// A typed write of `key` succeeded: a refused one is no longer listed.
  mutating func clearTypedRefusal(of key: String) {
    typed[key] = nil
  }
}

import Foundation

/// Why Zephyr left a key alone. Every refusal is logged as a warning and listed in
/// ``SyncStatus/refusedKeys`` until the key syncs again (``unencodable(_:)`` and
/// ``undecodableLocalValue(_:)``: until a
/// typed write of the key succeeds); the local value is never touched.
///
/// See <doc:LimitsAndDiagnostics> for when each reason occurs and what to do about it.
public enum RefusalReason: Sendable, Hashable, CustomStringConvertible {
  /// The key is longer than the store allows (iCloud raises an exception for these).
  case keyTooLong(bytes: Int, limit: Int)
  /// The key is a system key (`Apple…`, `NS…`, `com.apple.…`, …), never synced.
  case systemKey
  /// The key is one of Zephyr's own bookkeeping keys (`Zephyr.…`, `ZephyrSyncKey`).
  case bookkeepingKey
  /// The local value is not a property-list value.
  case notPropertyList
  /// The store holds a broken record for the key; Zephyr treats it as absent.
  case malformedRecord(String)
  /// The store holds a record of a newer format; Zephyr leaves it alone.
  case unsupportedFormat(String)
  /// The store holds a compressed record (see <doc:LimitsAndDiagnostics#Compressed-keys>)
  /// that cannot be read: its bytes are not a raw DEFLATE stream, they decompress to more
  /// than the store's 1 MB, or to something that is not a binary property list holding a
  /// Zephyr record. The associated text says which. Zephyr treats the record as absent,
  /// like a ``malformedRecord(_:)``: the local value is never touched, and the next write
  /// of the key replaces the record.
  case unreadableCompressedRecord(String)
  /// The key's merge strategy cannot merge its local value (`.set` over a string, say,
  /// set for a string key in ``SyncConfiguration/mergeStrategies``): the key is left
  /// alone, locally and in the store, rather than merged as something else. `strategy`
  /// names the strategy, `value` the kind of value.
  case strategyCannotMerge(strategy: String, value: String)
  /// The record would not fit: it needs `needed` bytes and only `available` are left.
  case overQuota(needed: Int, available: Int)
  /// Adding the key would exceed the store's key count.
  case tooManyKeys(limit: Int)
  /// A typed write was refused because its value could not be encoded (a `Codable`
  /// value whose `encode(to:)` threw; the associated text is the error). Nothing was
  /// written: `UserDefaults` and the store keep the key's previous value.
  case unencodable(String)
  /// An element edit (``SyncCoordinator/insert(_:into:)`` and its kin) was refused because
  /// the key's local value is not a value of the key's type (the associated text names
  /// the type): a hand-packed blob under a ``PackedSet`` key, say. Nothing was written, so
  /// the value the edit could not read is kept; a whole-value set of the key replaces it
  /// and clears the refusal.
  case undecodableLocalValue(String)

  /// A sentence fragment for logs and the status table: `71 bytes > 64`.
  public var description: String {
    switch self {
    case .keyTooLong(let bytes, let limit): "key is \(bytes) bytes > \(limit)"
    case .systemKey: "system key, never synced"
    case .bookkeepingKey: "Zephyr bookkeeping key, never synced"
    case .notPropertyList: "value is not a property-list type"
    case .malformedRecord(let reason): "malformed record in store (\(reason))"
    case .unsupportedFormat(let tag): "record format \(tag) is newer than this Zephyr"
    case .unreadableCompressedRecord(let reason): "compressed record in store cannot be read (\(reason))"
    case .strategyCannotMerge(let strategy, let value): "the \(strategy) strategy cannot merge a \(value) value"
    case .overQuota(let needed, let available): "needs \(needed) bytes, \(available) left"
    case .tooManyKeys(let limit): "store already holds \(limit) keys"
    case .unencodable(let error): "typed value could not be encoded, not written (\(error))"
    case .undecodableLocalValue(let type): "local value is not a \(type), element edit not made"
    }
  }
}

import Foundation

/// What the store holds, in the store's own accounting, kept up to date as the
/// coordinator reads and writes instead of being recomputed on every sync.
struct StoreBudget {
  /// Bytes per store key: the key's UTF-8 bytes plus the value's binary-plist size.
  private(set) var sizes: [String: Int] = [:]
  /// Bytes per store key that Zephyr's record adds over the bare value (the whole
  /// record for a tombstone).
  private(set) var overheads: [String: Int] = [:]
  private(set) var totalBytes = 0
  private(set) var totalOverhead = 0
  /// Whether every store key has been sized at least once.
  var isPrimed = false
  /// Whether usage was above the warning threshold at the last check.
  var aboveThreshold = false

  var keyCount: Int { sizes.count }

  /// Records what the store now holds for `key` (`nil`: nothing).
  mutating func record(_ key: String, storeValue: PropertyListValue?) {
    totalBytes -= sizes[key] ?? 0
    totalOverhead -= overheads[key] ?? 0
    guard let storeValue else {
      sizes[key] = nil
      overheads[key] = nil
      return
    }
    let size = PropertyListValue.storeSize(key: key, value: storeValue)
    let overhead: Int
    // A strategy key's record (its merge state) counts no overhead beyond its size,
    // as before; it is not decoded to know that.
    let isReplicaRecord: Bool
    if case .array(let fields) = storeValue, fields.first == .string(ReplicaRecord.tag) {
      isReplicaRecord = true
    } else {
      isReplicaRecord = false
    }
    switch isReplicaRecord ? nil : RemoteState(storeValue: storeValue) {
    case .record(let record):
      if case .value(let value) = record.content {
        overhead = storeValue.estimatedBinaryPlistSize - value.estimatedBinaryPlistSize
      } else {
        overhead = size - key.utf8.count
      }
    default:
      overhead = 0
    }
    sizes[key] = size
    overheads[key] = overhead
    totalBytes += size
    totalOverhead += overhead
  }

  /// Brings the key set in line with a full snapshot of the store: sizes keys not seen
  /// yet and drops keys that are gone. Keys already sized are not sized again.
  mutating func refresh(with snapshot: [String: PropertyListValue]) {
    for key in sizes.keys where snapshot[key] == nil { record(key, storeValue: nil) }
    for (key, value) in snapshot where sizes[key] == nil { record(key, storeValue: value) }
    isPrimed = true
  }

  /// Why a write of `size` bytes to `key` would not fit, or `nil` when it fits.
  func refusal(forWriting key: String, size: Int, limits: StoreLimits) -> RefusalReason? {
    let current = sizes[key]
    let others = totalBytes - (current ?? 0)
    if others + size > limits.maximumTotalBytes {
      return .overQuota(needed: size, available: max(0, limits.maximumTotalBytes - others))
    }
    if current == nil, sizes.count + 1 > limits.maximumKeyCount {
      return .tooManyKeys(limit: limits.maximumKeyCount)
    }
    return nil
  }

  /// The `count` largest keys, largest first.
  func largest(_ count: Int) -> [SyncStatus.KeySize] {
    sizes.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(count)
      .map { SyncStatus.KeySize(key: $0.key, bytes: $0.value) }
  }
}

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
  /// What the store holds per key, as last recorded: for ``SyncStatus/keySizes``.
  private(set) var values: [String: PropertyListValue] = [:]
  /// Per key, the number of the last ``record(_:storeValue:)``: a size computed from an
  /// older value is not cached.
  private var revisions: [String: UInt64] = [:]
  private var lastRevision: UInt64 = 0
  /// The sizes computed for the status so far, per key (see ``unsized()``).
  private var keySizes: [String: SyncStatus.KeySize] = [:]
  /// Whether every store key has been sized at least once.
  var isPrimed = false
  /// Whether usage was above the warning threshold at the last check.
  var aboveThreshold = false

  var keyCount: Int { sizes.count }

  /// Records what the store now holds for `key` (`nil`: nothing).
  mutating func record(_ key: String, storeValue: PropertyListValue?) {
    totalBytes -= sizes[key] ?? 0
    totalOverhead -= overheads[key] ?? 0
    lastRevision += 1
    revisions[key] = lastRevision
    keySizes[key] = nil
    values[key] = storeValue
    guard let storeValue else {
      sizes[key] = nil
      overheads[key] = nil
      revisions[key] = nil
      return
    }
    let size = PropertyListValue.storeSize(key: key, value: storeValue)
    let overhead: Int
    // Neither a strategy key's record (its merge state, no overhead beyond its size, as
    // before) nor a compressed one (what it saves shows in the status's key sizes) is
    // decoded here, under the lock.
    let undecoded: Bool
    if case .array(let fields) = storeValue, fields.first == .string(ReplicaRecord.tag) {
      undecoded = true
    } else {
      undecoded = CompressedRecord.isEnvelope(storeValue)
    }
    switch undecoded ? .absent : RemoteState(storeValue: storeValue) {
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
    if size > limits.maximumRecordBytes {
      return .overQuota(needed: size, available: limits.maximumRecordBytes)
    }
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
      .map { size(of: $0.key, bytes: $0.value) }
  }

  /// Every key's size, by key name: computed ones in full, the others (changed since the
  /// status computed them) with their store bytes only.
  var allSizes: [SyncStatus.KeySize] {
    sizes.sorted { $0.key < $1.key }.map { size(of: $0.key, bytes: $0.value) }
  }

  private func size(of key: String, bytes: Int) -> SyncStatus.KeySize {
    keySizes[key] ?? SyncStatus.KeySize(key: key, bytes: bytes)
  }

  /// The keys whose sizes are not computed yet, with their values and revisions: the
  /// status computes them with no lock held (``SyncStatus/KeySize/init(key:storeValue:)``)
  /// and hands them to ``cache(_:revision:)``.
  func unsized() -> [(value: PropertyListValue, key: String, revision: UInt64)] {
    values.compactMap { key, value in
      guard keySizes[key] == nil, let revision = revisions[key] else { return nil }
      return (value, key, revision)
    }
  }

  /// Keeps a size computed from the value of `revision`, unless the key changed since.
  mutating func cache(_ size: SyncStatus.KeySize, revision: UInt64) {
    if revisions[size.key] == revision { keySizes[size.key] = size }
  }
}

extension SyncStatus.KeySize {
  /// The sizes of `storeValue` stored under `key`: the record's, and its plain value's
  /// once opened (inflated, for a compressed record; the merged value, for a strategy
  /// key's state). Runs no user code: a `.custom` state's latest sibling stands for its
  /// value.
  init(key: String, storeValue: PropertyListValue) {
    let value: PropertyListValue? =
      switch RemoteState(storeValue: storeValue) {
      case .record(let record): record.content.value
      case .replica(let record): record.state.value(strategy: .lastWriterWins, key: key, resolving: false)
      case .foreign(let value): value
      case .absent, .malformed, .unreadableCompressed, .unsupported: nil
      }
    self.init(
      key: key, bytes: PropertyListValue.storeSize(key: key, value: storeValue),
      recordBytes: storeValue.estimatedBinaryPlistSize, valueBytes: value?.estimatedBinaryPlistSize,
      isCompressed: CompressedRecord.isEnvelope(storeValue))
  }
}

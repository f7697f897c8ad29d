import Foundation

/// A compressed key's record, compressed before the batch is planned (with no lock held):
/// the plain record and what compressing it came to.
struct Precompressed: Sendable, Equatable {
  var plain: PropertyListValue
  var outcome: CompressedRecord.Outcome
}

extension BatchDecisions {
  /// Compresses, with no lock held, the record each of `keys` (the compressed keys of the
  /// batch) will be written as: the value record of a push or a republish (a tombstone is
  /// never compressed), the state record of a merge that pushes. The plan takes one when
  /// it builds the very same plain record, and compresses under its lock otherwise.
  static func precompress(
    _ decisions: [String: Reconciler.Decision], keys: Set<String>, deviceID: String
  ) -> [String: Precompressed] {
    var result: [String: Precompressed] = [:]
    for key in keys {
      let plain: PropertyListValue
      switch decisions[key]?.action {
      case .push(let generation, let value?, _, let over)?:
        plain = SyncRecord(generation: generation, origin: deviceID, content: .value(value), madeOver: over).encoded
      case .republish(let stamp, let value?, _, let over)?:
        plain = SyncRecord(stamp: stamp.republished(by: deviceID), content: .value(value), madeOver: over).encoded
      case .merge(let merge)?:
        guard let stamp = merge.push else { continue }
        plain = ReplicaRecord(stamp: stamp, state: merge.state).encoded
      default:
        continue
      }
      result[key] = Precompressed(plain: plain, outcome: CompressedRecord.compress(plain))
    }
    return result
  }
}

extension EngineState {
  /// Whether `key`'s records are stored compressed: listed in
  /// ``SyncConfiguration/compressedKeys``, or declared so by a typed key.
  func compresses(_ key: String) -> Bool {
    configuration.compressedKeys.contains(key) || typedKeys[key]?.isCompressed == true
  }

  /// `record` as the store is to hold it: in a ``CompressedRecord`` envelope when `key`
  /// is compressed and the envelope is smaller, else plain (and the debug log says why);
  /// with a note for the push's log line. Takes the record compressed ahead when it is
  /// this one; else (a key declared compressed since the batch was decided) compresses it
  /// here, under the lock: no call out, but a few milliseconds for a large record.
  mutating func storedForm(
    of record: PropertyListValue, key: String, _ plan: BatchPlan
  ) -> (PropertyListValue, note: String) {
    guard compresses(key) else { return (record, "") }
    let outcome =
      if let ahead = plan.precompressed[key], ahead.plain == record { ahead.outcome } else {
        CompressedRecord.compress(record)
      }
    switch outcome {
    case .compressed(let envelope, let plainBytes, let storedBytes):
      return (envelope, ", compressed \(plainBytes) → \(storedBytes) bytes")
    case .plain(let reason):
      debug("store \(key) plain, not compressed: \(reason)")
      return (record, ", stored plain")
    }
  }
}

import Foundation
import Zephyr

/// One side of a Zephyr 5.0.1 decision: its values and its two generation maps.
struct Z5Snapshot {
  enum Action { case pushValue, pullValue, pushDelete, pullDelete, skip }

  var values: [String: PropertyListValue]
  var versions: [String: UInt64]
  var tombstones: [String: UInt64]

  var keys: Set<String> {
    Set(values.keys).union(versions.keys).union(tombstones.keys).subtracting(Zephyr5Model.metadataKeys)
  }

  func generation(_ key: String) -> UInt64 {
    max(versions[key] ?? 0, tombstones[key] ?? 0)
  }

  func isDeleted(_ key: String) -> Bool {
    let tombstone = tombstones[key] ?? 0
    return tombstone > 0 && tombstone > versions[key] ?? 0
  }

  func isPresent(_ key: String) -> Bool {
    values[key] != nil && !isDeleted(key)
  }

  mutating func setVersion(_ key: String, _ generation: UInt64) {
    versions[key] = generation
    tombstones[key] = nil
  }

  mutating func setTombstone(_ key: String, _ generation: UInt64) {
    tombstones[key] = generation
    versions[key] = nil
  }

  /// One above every generation either side's maps hold: the global bump.
  static func nextGeneration(_ local: Z5Snapshot, _ remote: Z5Snapshot) -> UInt64 {
    let all = [local.versions, local.tombstones, remote.versions, remote.tombstones].flatMap(\.values)
    return (all.max() ?? 0) + 1
  }

  /// The per-key rule: the higher generation wins; at equal generations absence is not a
  /// delete and differing values go by the mismatch policy.
  static func decide(
    _ key: String, local: Z5Snapshot, remote: Z5Snapshot, mismatch: Zephyr5Model.Mismatch
  ) -> Action {
    let localGeneration = local.generation(key)
    let remoteGeneration = remote.generation(key)
    if localGeneration > remoteGeneration {
      return local.isDeleted(key) ? .pushDelete : .pushValue
    }
    if remoteGeneration > localGeneration {
      return remote.isDeleted(key) ? .pullDelete : .pullValue
    }
    let localPresent = local.isPresent(key)
    let remotePresent = remote.isPresent(key)
    if localPresent && !remotePresent { return .pushValue }
    if remotePresent && !localPresent { return .pullValue }
    if localPresent && remotePresent && local.values[key] != remote.values[key] {
      return mismatch == .preferLocal ? .pushValue : .pullValue
    }
    return .skip
  }

  /// The winning side's entry for each decided key, to be laid over both sides' maps.
  static func merged(
    _ local: Z5Snapshot, _ remote: Z5Snapshot, keys: Set<String>
  ) -> (versions: [String: UInt64], tombstones: [String: UInt64]) {
    var versions: [String: UInt64] = [:]
    var tombstones: [String: UInt64] = [:]
    for key in keys where !Zephyr5Model.metadataKeys.contains(key) {
      guard let winner = winner(key, local, remote) else { continue }
      if winner.isDeleted(key), let tombstone = winner.tombstones[key] {
        tombstones[key] = tombstone
      } else if let version = winner.versions[key] {
        versions[key] = version
      } else if winner.isPresent(key) {
        versions[key] = max(local.generation(key), remote.generation(key), 1)
      }
    }
    return (versions, tombstones)
  }

  private static func winner(_ key: String, _ local: Z5Snapshot, _ remote: Z5Snapshot) -> Z5Snapshot? {
    let localGeneration = local.generation(key)
    let remoteGeneration = remote.generation(key)
    if localGeneration > remoteGeneration { return local }
    if remoteGeneration > localGeneration { return remote }
    if local.isPresent(key) { return local }
    if remote.isPresent(key) { return remote }
    let localTombstone = local.tombstones[key] ?? 0
    let remoteTombstone = remote.tombstones[key] ?? 0
    guard localTombstone > 0 || remoteTombstone > 0 else { return nil }
    return localTombstone >= remoteTombstone ? local : remote
  }
}

import Foundation

/// A record write the plan makes: its stamp and value, the merged value to write
/// locally too, and for keys merged by a strategy the writes its state includes, what
/// it is made of, and what the ledger remembers of it.
struct PlannedRecord {
  var stamp: Stamp
  var value: PropertyListValue?
  /// What a merge writes to `UserDefaults` too (a value, or a delete); `nil` for none.
  var merged: SyncRecord.Content?
  var versions = VersionVector()
  var data: MergeData?
  var memory: MergeMemory?
}

extension EngineState {
  /// The strategy that merges `key`.
  func strategy(of key: String) -> MergeStrategy {
    configuration.mergeStrategies[key] ?? .lastWriterWins
  }

  /// The store's state of `key`, pulled or adopted at `stamp` with `content` (a foreign
  /// value: its own write, under the empty origin), as a merge sees it.
  func storeState(of key: String, _ storeValue: PropertyListValue?, stamp: Stamp, content: SyncRecord.Content)
    -> MergeState
  {
    var record = SyncRecord(generation: stamp.generation, origin: stamp.origin, content: content)
    if case .record(let stored) = RemoteState(storeValue: storeValue), stored.stamp == stamp { record = stored }
    return MergeState(record: record, strategy: strategy(of: key))
  }

  /// What `key` remembers once it agrees on the store's `state`; nothing for
  /// last-writer-wins keys. A pulled state includes all this device knew (it was made
  /// after it, or the merge held nothing more); an adopted one, the same value reached
  /// alongside this device's state (`local`), joins what this device remembered.
  func memory(of key: String, agreeingOn state: MergeState, adopting local: PropertyListValue?? = nil)
    -> MergeMemory?
  {
    let strategy = strategy(of: key)
    guard !strategy.isLastWriterWins else { return nil }
    let versions = (ledger[key]?.versions ?? VersionVector()).joined(with: state.versions)
    guard case .some(let value) = local, let entry = ledger[key], let remembered = entry.memory else {
      return MergeMemory(versions: versions, record: state.versions, data: state.data)
    }
    let mine = MergeState(value: value, versions: remembered.versions, data: remembered.data, stamp: entry.stamp)
    // Only the data: planning runs under the lock, where no `.custom` rule may run.
    let merged = strategy.merge(key: key, mine, state, resolving: false).data
    return MergeMemory(
      versions: versions, record: state.versions,
      data: MergeState(value: value, versions: versions, data: merged, stamp: state.stamp).data)
  }

  /// A push of `value` at `stamp`: a merge's state (`merging`), or an edit made from the
  /// agreed state.
  func plannedPush(
    _ key: String, stamp: Stamp, value: PropertyListValue?, merged: SyncRecord.Content?, merging: MergedPush?
  ) -> PlannedRecord {
    var write = PlannedRecord(stamp: stamp, value: value, merged: merged)
    let strategy = strategy(of: key)
    guard !strategy.isLastWriterWins else { return write }
    let state = merging ?? .edit(value, at: stamp, from: ledger[key], strategy: strategy)
    write.versions = state.versions
    write.data = state.data
    write.memory = MergeMemory(versions: state.versions, record: state.versions, data: state.data)
    return write
  }

  /// The agreed state of `key` published again at `stamp`, saying what its record said;
  /// a new write of this device's when the memory holds writes that record did not
  /// include.
  func plannedRepublish(_ key: String, stamp: Stamp, value: PropertyListValue?) -> PlannedRecord {
    var write = PlannedRecord(stamp: stamp, value: value, merged: nil, memory: ledger[key]?.memory)
    let strategy = strategy(of: key)
    guard !strategy.isLastWriterWins, let entry = ledger[key] else { return write }
    if let memory = entry.memory, !memory.data.stamps.allSatisfy(memory.record.includes) {
      let next = Stamp(generation: Generation.next(after: ledger.clock), origin: deviceID)
      var versions = memory.versions
      versions.include(next)
      return plannedPush(
        key, stamp: next, value: value, merged: nil, merging: MergedPush(versions: versions, data: memory.data))
    }
    // The record says again what it included, below its own generation (a foreign
    // value read under its pseudo-origin goes out under that origin, the same on every
    // device; one agreed under the empty origin, under this device's id).
    write.versions = VersionVector(entry.recordVersions.entries.filter { $0.value < stamp.generation })
    write.versions.include(stamp)
    let state = MergeState(
      value: value, versions: write.versions,
      data: entry.memory?.data ?? .implied(by: stamp, value: value, strategy: strategy), stamp: stamp)
    write.data = state.data
    if write.memory == nil {
      write.memory = MergeMemory(
        versions: entry.versions.joined(with: write.versions), record: write.versions, data: state.data)
    }
    return write
  }
}

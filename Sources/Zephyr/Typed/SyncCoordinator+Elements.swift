import Foundation

extension SyncCoordinator {
  /// Adds `element` to a set key (`.set` or `.union` over an array or a ``PackedSet``),
  /// as one typed write of the key: one push, merged with every other device's edits.
  ///
  /// ```swift
  /// static let read = SyncKey<PackedSet<UInt32>>("read", default: [], merge: .set)
  /// coordinator.insert(articleID, into: Keys.read)
  /// ```
  ///
  /// The set is read and written back at once (as ``subscript(_:)`` would), so an
  /// element another device added meanwhile is kept by the merge. The write costs what
  /// encoding the whole set costs (about a millisecond for 25,000 packed ids); the set
  /// it wrote is kept decoded, so the next edit or read does not decode it again.
  ///
  /// Safe to call from any thread while the coordinator syncs: an edit that read the key
  /// while Zephyr was writing it (a pull of another device's edit) reads and edits again,
  /// waiting for that write to be committed, so neither the pulled elements nor the
  /// edit are lost.
  public func insert<Value: SetSyncValue>(_ element: Value.SetElement, into key: SyncKey<Value>) {
    insert(contentsOf: CollectionOfOne(element), into: key)
  }

  /// Adds every element of `elements` to a set key, as one write and one push; see
  /// ``insert(_:into:)``.
  public func insert<Value: SetSyncValue>(
    contentsOf elements: some Sequence<Value.SetElement>, into key: SyncKey<Value>
  ) {
    editElements(of: key) { $0.insertElements(elements) }
  }

  /// Removes `element` from a set key; see ``insert(_:into:)``. A device that had seen
  /// the element removes it everywhere; an add another device made without seeing it
  /// stays.
  public func remove<Value: SetSyncValue>(_ element: Value.SetElement, from key: SyncKey<Value>) {
    remove(contentsOf: CollectionOfOne(element), from: key)
  }

  /// Removes every element of `elements` from a set key, as one write and one push.
  public func remove<Value: SetSyncValue>(
    contentsOf elements: some Sequence<Value.SetElement>, from key: SyncKey<Value>
  ) {
    editElements(of: key) { $0.removeElements(elements) }
  }
}

extension SyncCoordinator {
  /// How many times an element edit reads the key again while Zephyr writes it.
  static let elementEditAttempts = 8

  /// Reads the key's set, applies `edit`, and writes it back as one typed write. A
  /// local value that is not a `Value` (it would read as the default) is refused and
  /// kept: the edit would replace it with the default plus the edit.
  ///
  /// A write of the key by Zephyr itself (a pull) in flight during the read, or begun
  /// since, could be replaced by the edit's value, which lacks what it wrote, and the
  /// next push would count its elements as removed here: the edit reads and edits again
  /// instead. After ``elementEditAttempts`` reads it writes anyway, and warns.
  private func editElements<Value: SetSyncValue>(of key: SyncKey<Value>, _ edit: (inout Value) -> Void) {
    for attempt in 1...Self.elementEditAttempts {
      let last = attempt == Self.elementEditAttempts
      let epoch = last ? nil : settledLocalWriteEpoch(of: key.name)
      guard case .edited(let stored) = editedValue(of: key, edit) else { return }
      if writeTyped(stored, for: key, readAt: epoch) { break }
      state.withLock { $0.debug("element edit of \(key.name): Zephyr writes the key meanwhile, read it again") }
      if attempt == Self.elementEditAttempts - 1 {
        state.withLock { state in
          state.warn(
            "element edit of \(key.name) written while Zephyr kept writing the key: a pulled element may be pushed as removed"
          )
        }
      }
    }
    emitLogs()
  }

  /// The key's ``OperationLane/localWriteEpochs`` count once no write of it by Zephyr is
  /// in flight: waits for the batch writing it to commit, for a second at most (a batch
  /// that waits for this thread, through an observer, lets it go then). On the batch's
  /// own thread it does not wait: the batch's writes were made before.
  private func settledLocalWriteEpoch(of name: String) -> UInt64 {
    let thread = ThreadIdentity.current
    let deadline = Date(timeIntervalSinceNow: 1)
    localWritesCommitted.lock()
    defer { localWritesCommitted.unlock() }
    while true {
      let (epoch, owned) = state.withLock { ($0.lane.localWriteEpochs[name] ?? 0, $0.lane.isOwned(by: thread)) }
      if epoch.isMultiple(of: 2) || owned || !localWritesCommitted.wait(until: deadline) { return epoch }
    }
  }

  private enum ElementEdit {
    case edited(PropertyListValue?)
    case refused
  }

  /// The key's stored set with `edit` applied, in its stored form; refused (with the
  /// refusal recorded) when the stored value is not a `Value` or the edited one does not
  /// encode.
  private func editedValue<Value: SetSyncValue>(of key: SyncKey<Value>, _ edit: (inout Value) -> Void) -> ElementEdit {
    var value = key.defaultValue
    if let stored = storedValue(forKey: key.name) {
      guard let read = validDecoded(stored, for: key) else {
        refuseElementEdit(of: key)
        return .refused
      }
      value = read
    }
    edit(&value)
    if let hook = testHooks.withLock({ $0.betweenElementReadAndWrite }) { hook(key.name) }
    let edited: PropertyListValue?
    do {
      edited = try value.propertyList
    } catch {
      refuseTypedWrite(of: key, error)
      return .refused
    }
    // Decoding a packed set's blob gives back the set: kept, the next edit or read of
    // the key decodes nothing.
    if value is any ExactlyStored, case .data(let blob)? = edited { keepDecoded(value, as: blob, for: key.name) }
    return .edited(edited)
  }

  private func refuseElementEdit<Value: SetSyncValue>(of key: SyncKey<Value>) {
    use(key)
    let reason = RefusalReason.undecodableLocalValue(String(describing: Value.self))
    state.withLock { state in
      if state.refusals.refuseTypedWrite(of: key.name, reason) {
        state.warn("refused element edit of \(key.name): \(reason); UserDefaults and the store keep the key's value")
      }
    }
    emitLogs()
  }
}

extension Zephyr {
  /// Adds `element` to a set key on ``shared``; see ``SyncCoordinator/insert(_:into:)``.
  ///
  /// ```swift
  /// Zephyr.insert(articleID, into: Keys.read)
  /// ```
  public static func insert<Value: SetSyncValue>(_ element: Value.SetElement, into key: SyncKey<Value>) {
    shared.insert(element, into: key)
  }

  /// Adds every element to a set key on ``shared``, as one push.
  public static func insert<Value: SetSyncValue>(
    contentsOf elements: some Sequence<Value.SetElement>, into key: SyncKey<Value>
  ) {
    shared.insert(contentsOf: elements, into: key)
  }

  /// Removes `element` from a set key on ``shared``.
  public static func remove<Value: SetSyncValue>(_ element: Value.SetElement, from key: SyncKey<Value>) {
    shared.remove(element, from: key)
  }

  /// Removes every element from a set key on ``shared``, as one push.
  public static func remove<Value: SetSyncValue>(
    contentsOf elements: some Sequence<Value.SetElement>, from key: SyncKey<Value>
  ) {
    shared.remove(contentsOf: elements, from: key)
  }
}

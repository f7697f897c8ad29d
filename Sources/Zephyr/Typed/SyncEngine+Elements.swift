import Foundation

extension SyncEngine {
}

extension SyncEngine {
  /// Reads the key's set, applies `edit`, and writes it back as one typed write. A
  /// local value that is not a `Value` (it would read as the default) is refused and
  /// kept: the edit would replace it with the default plus the edit.
  ///
  /// Another write of the key may land between the read and the write: Zephyr's own (a
  /// pull) or another thread's typed write. The edit's value would lack what it wrote,
  /// and the next push would count that as removed here. So the edit notes the key's
  /// writes before it reads, and writes only if none could have been missed
  /// (``KeyWrites``); else it waits for a write in flight to return, and reads and edits
  /// again. After a second of waiting it writes anyway, and warns.
  func editElements<Value: SetSyncValue>(of key: SyncKey<Value>, _ edit: (inout Value) -> Void) {
    let deadline = Date(timeIntervalSinceNow: 1)
    var checked = true
    func stopChecking() {
      checked = false
      state.withLock { state in
        state.warn(
          "element edit of \(key.name) written unchecked: another write of the key did not return for a second")
      }
    }
    while true {
      let base = checked ? state.withLock { $0.lane.keyWrites[key.name, default: KeyWrites()].editBase } : nil
      guard case .edited(let read, let stored) = editedValue(of: key, edit) else { return }
      if writeTyped(stored, for: key, edit: base.map { ($0, read) }) { break }
      state.withLock { $0.debug("element edit of \(key.name): the key was written meanwhile, read it again") }
      if !waitForKeyWrite(of: key.name, until: deadline) { stopChecking() }
    }
    emitLogs()
  }

  /// Waits, until `deadline`, for the write of the key in flight (a batch's or a typed
  /// one), if any, to return; `false` when the deadline passed.
  private func waitForKeyWrite(of name: String, until deadline: Date) -> Bool {
    keyWritesSettled.lock()
    defer { keyWritesSettled.unlock() }
    while true {
      let writes = state.withLock { $0.lane.keyWrites[name] ?? KeyWrites() }
      if writes.batchWriting == nil, writes.typedLanding == 0 { return Date() < deadline }
      if !keyWritesSettled.wait(until: deadline) { return false }
    }
  }

  private enum ElementEdit {
    /// The value read, and the edited one.
    case edited(read: PropertyListValue?, PropertyListValue?)
    case refused
  }

  /// The key's stored set with `edit` applied, in its stored form; refused (with the
  /// refusal recorded) when the stored value is not a `Value` or the edited one does not
  /// encode.
  private func editedValue<Value: SetSyncValue>(of key: SyncKey<Value>, _ edit: (inout Value) -> Void) -> ElementEdit {
    var value = key.defaultValue
    let stored = storedValue(forKey: key.name)
    if let stored {
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
    return .edited(read: stored, edited)
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

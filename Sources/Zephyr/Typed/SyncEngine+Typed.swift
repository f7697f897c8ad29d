import Foundation

extension SyncEngine {
  /// What keeps, in the fields of a struct to write, the fields the key's value holds that
  /// `Value` does not know (a newer app version's, written on another device): a device
  /// still on an older version that sets the struct keeps them, instead of removing them
  /// on every device and leaving the newer version unable to decode the struct. A field
  /// is known when the value, decoded as `Value` and encoded again, still holds it, so a
  /// field `Value` knows and left out (a `nil` optional) is removed. Top-level fields only;
  /// a `[String: …]` dictionary knows every key it holds (and has no keeper).
  static func unknownFieldKeeper<Value: SyncValue>(_: Value.Type) -> FieldKeeper {
    { stored, current in
      guard case .dictionary(var fields)? = stored, case .dictionary(let current)? = current(),
        let decoded = Value(propertyList: .dictionary(current)),
        case .dictionary(let known)? = try? decoded.propertyList
      else { return stored }
      let unknown = current.filter { known[$0.key] == nil && fields[$0.key] == nil }
      guard !unknown.isEmpty else { return stored }
      fields.merge(unknown) { mine, _ in mine }
      return .dictionary(fields)
    }
  }

  /// Makes a key's first use: it is monitored from now on (unless refused), and its
  /// merge strategy applies unless the configuration names one (see
  /// ``EngineState/strategy(of:)``); a key declared `compressed: true` is compressed
  /// from then on, whatever the configuration lists.
  /// With `reconciling`, the key is also reconciled on the local-edit queue, to pull a
  /// value that arrived before this first use; a set does without, since it pushes the
  /// key anyway.
  @discardableResult
  func use<Value>(_ key: SyncKey<Value>, reconciling: Bool = true) -> Bool {
    let first = state.withLock { state -> Bool in
      guard let declared = state.typedKeys[key.name] else {
        // Before the reconcile is scheduled: it merges with the key's strategy.
        state.typedKeys[key.name] = key.declaration
        state.monitoredKeys.formUnion(state.admit([key.name]))
        return true
      }
      // Before its first push: a key declared compressed by any of its typed keys is.
      if key.isCompressed, !declared.isCompressed { state.typedKeys[key.name]?.isCompressed = true }
      return false
    }
    guard first else { return false }
    if reconciling { reconcileOnFirstUse(key.name) }
    emitLogs()
    return true
  }

  /// A read's use of `key`: on its first use, the key's reconcile (``reconcileOnFirstUse(_:)``)
  /// runs before the read, on this thread, so that the read returns the reconciled value
  /// and a write made from it is made over that state (see ``subscript(_:)``). On this
  /// coordinator's own operation thread (an observer of its writes, its resolver), where
  /// waiting for an operation could never end, it runs after that operation instead.
  ///
  /// Queued behind another thread's operation that is calling out (see ``OperationLane``),
  /// the read waits for the reconcile a second at most, and then returns what it finds.
  func useReconciling<Value>(_ key: SyncKey<Value>) {
    let thread = ThreadIdentity.current
    let inside = state.withLock { $0.lane.isOwned(by: thread) }
    guard use(key, reconciling: false), markForFirstUseReconcile(key.name) else { return }
    if inside {
      schedulePush(diffingDomain: false)
      return
    }
    run(.localEdits)
    guard waitForFirstUseReconcile(of: key.name, until: Date(timeIntervalSinceNow: 1)) else {
      warnNow("first read of \(key.name) returned before its reconcile: another operation did not end for a second")
      return
    }
  }

  /// Waits, until `deadline`, for the first-use reconcile of `name` to finish; `false`
  /// when the deadline passed first.
  private func waitForFirstUseReconcile(of name: String, until deadline: Date) -> Bool {
    keyWritesSettled.lock()
    defer { keyWritesSettled.unlock() }
    // (While protected data is unavailable the reconcile waits for it, and so would the
    // read: it returns what it finds, as every read does then.)
    while state.withLock({ $0.lane.firstUseReconciles.contains(name) && $0.status.isProtectedDataAvailable }) {
      if !keyWritesSettled.wait(until: deadline) { return false }
    }
    return true
  }

  /// Has the next push of local edits read `name` again and reconcile it, with the rules
  /// of `sync(keys: [name])`: the push reads just this key (with `object(forKey:)`,
  /// checked against the persistent domain only when its value is not the one last
  /// agreed), never the whole domain. A typed write already waiting carries the key.
  private func reconcileOnFirstUse(_ name: String) {
    if markForFirstUseReconcile(name) { schedulePush(diffingDomain: false) }
  }

  /// Marks `name` to be read again and reconciled by the next push of local edits;
  /// `false` when the key can never sync (a refused name).
  private func markForFirstUseReconcile(_ name: String) -> Bool {
    state.withLock { state -> Bool in
      guard KeyPolicy.refusal(of: name, limits: state.configuration.limits) == nil else { return false }
      if state.lane.typedWrites[name] == nil { state.lane.typedWrites[name] = .reread }
      state.lane.firstUseReconciles.insert(name)
      state.debug("first use of typed key \(name): reconcile it")
      return true
    }
  }

  /// The value a typed read decodes: what `object(forKey:)` returns for `name`, in one
  /// call (see ``subscript(_:)``).
  /// While protected data is unavailable, a typed set held until it is available reads
  /// back as set.
  func storedValue(forKey name: String) -> PropertyListValue? {
    if let held = heldTypedSet(forKey: name) { return held }
    return domain.visibleValue(forKey: name)
  }

  /// Writes `value` (or removes the key, for `nil`) as Zephyr's own write, tells the
  /// key's streams, and schedules its push.
  ///
  /// - Parameter edit: For a value computed from a read of the key (an element edit):
  ///   what the edit noted before its read, and the value it read. When a write of the
  ///   key by Zephyr or another typed write could have been missed by that read (see
  ///   ``KeyWrites/admitsEdit(from:read:)``), nothing is written and this returns `false`:
  ///   read again.
  /// - Parameter keeper: For a set of a struct: what keeps the fields of the key's value
  ///   that the struct does not know (``unknownFieldKeeper(_:)``), from the value read now
  ///   or, for a set held until protected data is available, then.
  @discardableResult
  func writeTyped<Value>(
    _ value: PropertyListValue?, for key: SyncKey<Value>,
    edit: (base: KeyWrites.EditBase, read: PropertyListValue?)? = nil, keeping keeper: FieldKeeper? = nil
  ) -> Bool {
    use(key, reconciling: false)
    let name = key.name
    // Before the first unlock nothing is written: the set waits, and reads back as set.
    if holdTypedSetUntilProtectedData(value, forKey: name, keeping: keeper) { return true }
    var value = value
    if let keeper {
      let kept = keeper(value) { storedValue(forKey: name) }
      if kept != value { state.withLock { $0.debug("set \(name): kept the fields this app version does not know") } }
      value = kept
    }
    // Recorded before the write: a pull that writes the key meanwhile marks it to be
    // read again, whichever of the two writes lands last; a batch that read the key
    // before this record leaves it to this write's push (``KeyWrites``).
    let recorded = state.withLock { state -> Bool in
      if let edit, !state.lane.keyWrites[name, default: KeyWrites()].admitsEdit(from: edit.base, read: edit.read) {
        return false
      }
      state.lane.typedWrites[name] = .written(value)
      // A set made after an initial download or an account change is a deliberate edit:
      // a batch that reads it (a first-use reconcile running now) merges it, rather than
      // take the store's state over it as over a write made before them.
      state.markReconciled([name])
      state.lane.keyWrites[name, default: KeyWrites()].recordTypedWrite(value)
      state.refusals.clearTypedRefusal(of: name)
      return true
    }
    guard recorded else { return false }
    // Not through an operation's call out: this runs on the app's thread, outside the
    // lane, maybe while another thread's operation runs (see ``writeAsOwn(_:)``).
    let counted = writeAsOwn { domain in
      if let value { domain.set(value, forKey: name) } else { domain.remove(forKey: name) }
    }
    state.withLock { state in
      state.lane.keyWrites[name, default: KeyWrites()].typedWriteReturned()
      // A push that took this write's record before it landed may have left the key
      // (its read did not show the write): the next push reads it again.
      if state.lane.typedWrites[name] == nil { state.lane.typedWrites[name] = .reread }
    }
    signalKeyWrites()
    // An observer edited the suite from inside our write: that edit is pushed at once,
    // and the typed write waits to share its push.
    if counted.includeOtherEdits { schedulePush(diffingDomain: true) } else { scheduleCoalescedPush() }
    publishChanges(of: [name])
    return true
  }

  /// Refuses a set whose value could not be encoded: nothing is written or pushed, a
  /// warning names the key and the error, and ``status`` lists the key until a set of it
  /// succeeds. It still counts as the key's first use.
  func refuseTypedWrite<Value>(of key: SyncKey<Value>, _ error: any Error) {
    use(key)
    let reason = RefusalReason.unencodable(Self.describe(error))
    state.withLock { state in
      if state.refusals.refuseTypedWrite(of: key.name, reason) {
        state.metrics.countRefusal(reason)
        state.warn("refused typed write of \(key.name): \(reason); UserDefaults and the store keep the key's value")
      }
    }
    emitLogs()
  }

  /// An encoding error as a short phrase: what the value's own encoding said (the
  /// encoder wraps it in an error about the top-level value), and where.
  private static func describe(_ error: any Error) -> String {
    guard case .invalidValue(_, let context) = error as? EncodingError else { return String(describing: error) }
    if let underlying = context.underlyingError { return describe(underlying) }
    let path = context.codingPath.map(\.stringValue).filter { !$0.isEmpty }
    return path.isEmpty ? context.debugDescription : "\(context.debugDescription) at \(path.joined(separator: "."))"
  }
}

/// A large blob a typed key last read, and the value it decoded to: the next read of the
/// same bytes returns the value without decoding 25,000 packed ids again.
struct DecodedRead: Sendable {
  /// Blobs smaller than this are decoded on every read: it costs less than comparing.
  static let minimumBytes = 1_024
  var blob: Data
  var value: any Sendable
}

extension SyncEngine {
  /// `stored` decoded as the key's value (its default when there is none, or when it does
  /// not decode); see ``validDecoded(_:for:)``.
  func decoded<Value>(_ stored: PropertyListValue?, for key: SyncKey<Value>) -> Value {
    stored.flatMap { validDecoded($0, for: key) } ?? key.defaultValue
  }

  /// `stored` decoded as the key's value, `nil` when it does not decode: from
  /// ``decodedReads`` when it is the large blob read or written last time (compared byte
  /// for byte, so no change is missed, whoever wrote it), else decoded and, when large,
  /// kept for next time. Only values that decoded are kept.
  func validDecoded<Value>(_ stored: PropertyListValue, for key: SyncKey<Value>) -> Value? {
    guard case .data(let blob) = stored, blob.count >= DecodedRead.minimumBytes else {
      return Value(propertyList: stored)
    }
    if let cached = decodedReads.withLock({ $0[key.name] }), cached.blob == blob, let value = cached.value as? Value {
      return value
    }
    guard let value = Value(propertyList: stored) else { return nil }
    keepDecoded(value, as: blob, for: key.name)
    return value
  }

  /// Keeps `value` as what `blob` decodes to, when the blob is large.
  func keepDecoded(_ value: some Sendable, as blob: Data, for name: String) {
    guard blob.count >= DecodedRead.minimumBytes else { return }
    decodedReads.withLock { $0[name] = DecodedRead(blob: blob, value: value) }
  }
}

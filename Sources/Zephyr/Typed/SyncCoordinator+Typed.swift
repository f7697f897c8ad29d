import Foundation

/// Typed access: a ``SyncKey``'s value, its element edits and its changes.
extension SyncCoordinator {
  /// The key's value, as `UserDefaults` and `@AppStorage` read it: what
  /// `object(forKey:)` returns (the persistent domain, else a launch argument or a
  /// registered default), decoded; else the key's default. Setting it writes
  /// `UserDefaults` at once and pushes this one key. While protected data is unavailable
  /// (before the first unlock) a set is held instead, and written and pushed once it is
  /// available; reads return it meanwhile.
  ///
  /// ```swift
  /// coordinator[Settings.theme] = "dark"   // a read on the next line sees "dark"
  /// coordinator[Settings.theme]            // "dark"
  /// ```
  ///
  /// A read is one `object(forKey:)` call, whatever the number of keys. A value
  /// registered with `register(defaults:)` reads like a stored one, as with
  /// `UserDefaults.string(forKey:)`, but is never synced: syncing reads the persistent
  /// domain only.
  ///
  /// A set is written to `UserDefaults` before it returns, as Zephyr's own write (its
  /// `didChangeNotification` is not taken for an unknown edit), and pushed on Zephyr's
  /// local-edit queue: sets made in a row are pushed as one batch, with one
  /// `synchronize()`. The push knows its key, so it never reads the whole domain: it
  /// costs the same with 10 synced keys or 1,000. A set made while an operation runs is
  /// pushed after it. Setting an optional key to `nil` removes it, on every device. A
  /// value that cannot be encoded (a `Codable` whose `encode(to:)` throws) is not
  /// written: the key keeps its value, locally and in the store, a warning is logged and
  /// ``status`` lists the key as ``RefusalReason/unencodable(_:)`` until a set of it
  /// succeeds.
  ///
  /// Another device's change of the key arriving before the push meets the set as a
  /// conflict, like any local edit not pushed yet: under `.lastWriterWins` the inbound
  /// change wins. A set on a device with no history of the key edits the store's value:
  /// it is not taken for a never-synced device's write (see <doc:TypedKeys>).
  ///
  /// The key is monitored from its first use, so changes from other devices are applied
  /// as they arrive. A first read also reconciles the key before it returns, as
  /// `sync(keys: [key.name])` would: a value that reached this device before the key was
  /// first used (the initial download of a new install, a change whose event was
  /// missed) is pulled then, and the read returns it. So a write made from a first read,
  /// `c[favorites] = c[favorites] + ["c"]`, is made over the state the read returned, and
  /// on a new install adds to the cloud's favorites. (Made from inside Zephyr's own
  /// operation, say an observer of its `UserDefaults` writes on its thread, the first
  /// read cannot wait for a reconcile: it schedules it, and returns the value held
  /// before it.) A first ``changes(of:)`` or ``SyncedValue`` reconciles the key on the
  /// local-edit queue, and yields the value held before, then the reconciled one. Call it
  /// from any thread; ``waitForPendingLocalEdits()`` waits for the push or reconcile
  /// (tests only).
  public subscript<Value>(key: SyncKey<Value>) -> Value {
    get {
      // A first use reconciles the key before reading it (see ``useReconciling(_:)``).
      engine.useReconciling(key)
      return engine.decoded(engine.storedValue(forKey: key.name), for: key)
    }
    set {
      let stored: PropertyListValue?
      do {
        stored = try newValue.propertyList
      } catch {
        engine.refuseTypedWrite(of: key, error)
        return
      }
      engine.writeTyped(
        stored, for: key,
        keeping: Value.self is any KnowsEveryField.Type ? nil : SyncEngine.unknownFieldKeeper(Value.self))
    }
  }

  /// Removes the key's value, locally and then, as a tombstone, on every device; a read
  /// then returns the key's default (or a registered default; see ``subscript(_:)``).
  ///
  /// ```swift
  /// coordinator.removeValue(for: Settings.theme)
  /// coordinator[Settings.theme]   // "light", the default
  /// ```
  public func removeValue<Value>(for key: SyncKey<Value>) {
    engine.writeTyped(nil, for: key)
  }

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
  /// Safe to call from any thread while the coordinator syncs: an edit whose read could
  /// have missed another write of the key (a pull of another device's edit, or another
  /// thread's edit) reads and edits again, so neither is lost. Before reading again it
  /// waits for a write still in flight, a second at most.
  public func insert<Value: SetSyncValue>(_ element: Value.SetElement, into key: SyncKey<Value>) {
    insert(contentsOf: CollectionOfOne(element), into: key)
  }

  /// Adds every element of `elements` to a set key, as one write and one push; see
  /// ``insert(_:into:)``.
  public func insert<Value: SetSyncValue>(
    contentsOf elements: some Sequence<Value.SetElement>, into key: SyncKey<Value>
  ) {
    engine.editElements(of: key) { $0.insertElements(elements) }
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
    engine.editElements(of: key) { $0.removeElements(elements) }
  }

  /// The key's value now, then every new value: set on this device (through a typed key,
  /// or an edit Zephyr notices), or pulled from another device. Finishes when the
  /// coordinator is released.
  ///
  /// ```swift
  /// for await theme in coordinator.changes(of: Settings.theme) {
  ///   apply(theme)   // "light" at once, then each change
  /// }
  /// ```
  ///
  /// - Each value is read from `UserDefaults` when it is delivered (as
  ///   ``subscript(_:)`` reads it), so the stream always ends on the value
  ///   `UserDefaults` holds, and yields values in the order they were written. Values
  ///   replaced before they could be delivered (two sets in quick succession from
  ///   different threads) may be skipped, and a value equal to the one last yielded is
  ///   not yielded again.
  /// - Values are yielded after Zephyr's lock is released, possibly on another thread
  ///   than the one that made the change (whichever thread is delivering changes of the
  ///   coordinator at the time), and buffered until the loop takes them.
  /// - An edit made through plain `UserDefaults` is yielded when Zephyr notices it: at
  ///   once through the coordinator's own instance on Apple platforms (its
  ///   `didChangeNotification`), otherwise at the next ``sync()``.
  /// - The key is monitored from its first use, so changes from other devices are applied
  ///   (and yielded) as they arrive; a first use also reconciles the key (see
  ///   ``subscript(_:)``), and a value pulled then is yielded after the current one.
  /// - Cancelling the task that iterates, or dropping the stream, stops the stream.
  public func changes<Value>(of key: SyncKey<Value>) -> AsyncStream<Value> {
    engine.changes(of: key)
  }
}

import Foundation

extension SyncCoordinator {
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
    let (stream, continuation) = AsyncStream<Value>.makeStream()
    let observer = ChangeObservers.Observer(
      key: key.name,
      deliver: { stored in continuation.yield(key.value(from: stored)) },
      finish: { continuation.finish() })
    // Registered with its key marked changed: the current value goes out through the
    // same drain as every change, so a change made meanwhile is yielded after it.
    let observerID = changeObservers.withLock { $0.add(observer) }
    continuation.onTermination = { [weak self] _ in
      self?.changeObservers.withLock { $0.remove(observerID) }
    }
    drainChangesIfIdle()
    // After the current value went out: what a first use pulls is yielded after it.
    use(key)
    return stream
  }

  /// Marks `keys` changed for the streams that follow them and, unless another thread is
  /// delivering changes already (it then delivers these too), delivers them. Called with
  /// no lock held. Keys no stream follows are never read.
  ///
  /// While protected data is unavailable, `UserDefaults` reads as empty: the keys stay
  /// marked, and are delivered once it is available (see ``drainChangesIfIdle()``).
  func publishChanges(of keys: some Sequence<String>) {
    guard checkProtectedData() else {
      changeObservers.withLock { $0.mark(keys) }
      return
    }
    guard changeObservers.withLock({ $0.markChanged(keys) }) else { return }
    drainChanges()
  }

  /// Delivers the keys marked changed, unless a drain runs (it then delivers them) or
  /// protected data is unavailable (they wait for it).
  func drainChangesIfIdle() {
    guard checkProtectedData(), changeObservers.withLock({ $0.startDrain() }) else { return }
    drainChanges()
  }

  /// The drain loop: this thread delivers every changed key until none is left. Reads
  /// and yields with no lock held; a change made meanwhile (by a read's or a yield's
  /// side effects, or on another thread) is marked and delivered by a later turn. Made
  /// from inside an operation (protected data becoming available), it is a call-out.
  private func drainChanges() {
    callingOut {
      while let keys = changeObservers.withLock({ $0.takeChanged() }) {
        var values: [String: PropertyListValue?] = [:]
        for key in keys { values[key] = .some(storedValue(forKey: key)) }
        for delivery in changeObservers.withLock({ $0.deliveries(of: values) }) {
          delivery()
        }
      }
    }
  }
}

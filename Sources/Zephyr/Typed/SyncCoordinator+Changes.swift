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
  /// - A value equal to the one last yielded is not yielded again.
  /// - Values are yielded on the thread that made the change, after Zephyr's lock is
  ///   released, and buffered until the loop takes them. Two threads setting the same
  ///   key at once may have their values yielded in either order.
  /// - An edit made through plain `UserDefaults` is yielded when Zephyr notices it: at
  ///   once through the coordinator's own instance on Apple platforms (its
  ///   `didChangeNotification`), otherwise at the next ``sync()``.
  /// - The key is monitored from its first use, so changes from other devices are applied
  ///   (and yielded) as they arrive.
  /// - Cancelling the task that iterates, or dropping the stream, stops the stream.
  public func changes<Value>(of key: SyncKey<Value>) -> AsyncStream<Value> {
    use(key)
    let (stream, continuation) = AsyncStream<Value>.makeStream()
    let observer = ChangeObservers.Observer(
      key: key.name,
      deliver: { stored in continuation.yield(key.value(from: stored)) },
      finish: { continuation.finish() })
    let observerID = changeObservers.withLock { $0.add(observer) }
    continuation.onTermination = { [weak self] _ in
      self?.changeObservers.withLock { $0.remove(observerID) }
    }
    // The current value, read after registering: a change made meanwhile is not missed.
    let current = storedValue(forKey: key.name)
    for delivery in changeObservers.withLock({ $0.deliveries(of: [key.name: current], only: observerID) }) {
      delivery()
    }
    return stream
  }

  /// Yields `values` (key → local value) to the streams that follow those keys and
  /// have not yielded that value last. Called with no lock held.
  func publish(_ values: [String: PropertyListValue?]) {
    guard !values.isEmpty else { return }
    for delivery in changeObservers.withLock({ $0.deliveries(of: values) }) {
      delivery()
    }
  }
}

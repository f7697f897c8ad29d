import Foundation

extension SyncEngine {
  /// See ``SyncCoordinator/changes(of:)``.
  func changes<Value>(of key: SyncKey<Value>) -> AsyncStream<Value> {
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

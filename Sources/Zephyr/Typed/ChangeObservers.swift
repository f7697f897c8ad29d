import Foundation

/// The ``SyncCoordinator/changes(of:)`` streams of one coordinator, with what each last
/// yielded. Held in a `Locked`; deciding who gets a value happens under the lock, the
/// yields after it.
struct ChangeObservers: Sendable {
  /// One stream.
  struct Observer: Sendable {
    /// What a stream has yielded so far.
    enum Yielded: Sendable, Equatable {
      case nothing
      case value(PropertyListValue?)
    }

    var key: String
    var last: Yielded = .nothing
    /// Decodes a stored value and yields it (outside the lock).
    let deliver: @Sendable (PropertyListValue?) -> Void
    /// Finishes the stream (outside the lock).
    let finish: @Sendable () -> Void
  }

  private var observers: [Int: Observer] = [:]
  private var nextID = 0

  /// The keys some stream follows.
  var observedKeys: Set<String> {
    observers.isEmpty ? [] : Set(observers.values.map(\.key))
  }

  /// Adds a stream; returns its id.
  mutating func add(_ observer: Observer) -> Int {
    nextID += 1
    observers[nextID] = observer
    return nextID
  }

  mutating func remove(_ id: Int) {
    observers[id] = nil
  }

  /// Removes every stream and returns them, to be finished outside the lock.
  mutating func removeAll() -> [Observer] {
    defer { observers = [:] }
    return Array(observers.values)
  }

  /// The deliveries to make for `values` (key → local value, `nil` when absent): one per
  /// stream of a key whose value differs from what that stream last yielded. Records
  /// them as yielded; the caller makes them after releasing the lock. With `only`, just
  /// that stream is considered.
  mutating func deliveries(of values: [String: PropertyListValue?], only: Int? = nil) -> [@Sendable () -> Void] {
    guard !observers.isEmpty, !values.isEmpty else { return [] }
    var deliveries: [@Sendable () -> Void] = []
    for (id, observer) in observers where only == nil || only == id {
      guard let value = values[observer.key], observer.last != .value(value) else { continue }
      observers[id]?.last = .value(value)
      let deliver = observer.deliver
      deliveries.append { deliver(value) }
    }
    return deliveries
  }
}

import Foundation

/// The ``SyncCoordinator/changes(of:)`` streams of one coordinator, with what each last
/// yielded, and the keys changed since they were last delivered. Held in a `Locked`.
///
/// Publication has a single drainer: a publisher marks its keys changed; when no drain
/// is running, it becomes the drainer and loops — take the changed keys, read their
/// values (no lock held), decide the deliveries (under the lock), yield (no lock held) —
/// until no key is left, and only then lets go, in the same lock section as the empty
/// check. Values are read after they are marked, and yielded by one thread at a time, so
/// each stream yields in order and ends on the value `UserDefaults` holds.
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
  /// How many streams follow each key.
  private var followers: [String: Int] = [:]
  private var nextID = 0
  /// Followed keys changed since the drain last read them.
  private var changed: Set<String> = []
  /// Whether a thread is draining ``changed`` now.
  private var isDraining = false

  /// The keys some stream follows.
  var observedKeys: Set<String> { Set(followers.keys) }

  /// Adds a stream, its key marked changed so that the next drain yields it the current
  /// value; returns its id.
  mutating func add(_ observer: Observer) -> Int {
    nextID += 1
    observers[nextID] = observer
    followers[observer.key, default: 0] += 1
    changed.insert(observer.key)
    return nextID
  }

  mutating func remove(_ id: Int) {
    guard let observer = observers.removeValue(forKey: id) else { return }
    let remaining = (followers[observer.key] ?? 1) - 1
    followers[observer.key] = remaining > 0 ? remaining : nil
  }

  /// Removes every stream and returns them, to be finished outside the lock.
  mutating func removeAll() -> [Observer] {
    defer {
      observers = [:]
      followers = [:]
      changed = []
    }
    return observers.keys.sorted().compactMap { observers[$0] }
  }

  /// Marks those of `keys` that some stream follows as changed. Returns `true` when the
  /// caller is to drain: something is marked and no drain runs (it now counts as
  /// running); otherwise the running drain delivers the keys.
  mutating func markChanged(_ keys: some Sequence<String>) -> Bool {
    if !followers.isEmpty {
      for key in keys where followers[key] != nil { changed.insert(key) }
    }
    return startDrain()
  }

  /// Marks those of `keys` that some stream follows as changed, to be delivered by the
  /// next drain.
  mutating func mark(_ keys: some Sequence<String>) {
    for key in keys where followers[key] != nil { changed.insert(key) }
  }

  /// Whether the caller is to drain: some key is marked and no drain runs (it now counts
  /// as running).
  mutating func startDrain() -> Bool {
    guard !changed.isEmpty, !isDraining else { return false }
    isDraining = true
    return true
  }

  /// The drainer's next keys to read, each once; `nil` when none are left, and the drain
  /// then ends (no further call may follow without ``markChanged(_:)`` returning `true`).
  mutating func takeChanged() -> [String]? {
    let keys = changed.filter { followers[$0] != nil }
    changed = []
    guard !keys.isEmpty else {
      isDraining = false
      return nil
    }
    return keys.sorted()
  }

  /// The deliveries to make for `values` (key → local value, `nil` when absent): one per
  /// stream of a key whose value differs from what that stream last yielded. Records
  /// them as yielded; the drainer makes them after releasing the lock.
  mutating func deliveries(of values: [String: PropertyListValue?]) -> [@Sendable () -> Void] {
    guard !observers.isEmpty, !values.isEmpty else { return [] }
    var deliveries: [@Sendable () -> Void] = []
    // Streams in the order they were made, in every process.
    for id in observers.keys.sorted() {
      guard let observer = observers[id], let value = values[observer.key], observer.last != .value(value) else {
        continue
      }
      observers[id]?.last = .value(value)
      let deliver = observer.deliver
      deliveries.append { deliver(value) }
    }
    return deliveries
  }
}

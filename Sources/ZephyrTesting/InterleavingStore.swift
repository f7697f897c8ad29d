import Foundation
import Zephyr

/// A ``KeyValueSyncStore`` over another one that runs an action from inside the next call
/// of a chosen method, on the calling thread, before the call returns: an external
/// change the store delivers while Zephyr reads or writes it.
///
/// `NSUbiquitousKeyValueStore` posts `didChangeExternallyNotification` on a thread of its
/// choosing, whenever its cache changes, and `NotificationCenter` makes the posting thread
/// wait until every observer has returned. So a change can arrive, and be waited for,
/// while the engine is inside any call of the store. A coordinator must never make the
/// store's thread wait for the call it is inside:
///
/// ```swift
/// let cloud = SimulatedCloud()
/// let store = InterleavingStore(cloud.device("A"))
/// let coordinator = SyncCoordinator(defaults: suite, suiteName: "A", store: store)
/// store.duringNext(.allValues) { cloud.download(to: "A") }  // waits for A's observers
/// coordinator.sync()   // returns; the change is applied once, right after the sync
/// ```
public final class InterleavingStore: KeyValueSyncStore {
  /// A method of ``KeyValueSyncStore`` that an action can run inside.
  public enum Method: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ``KeyValueSyncStore/value(forKey:)``.
    case value
    /// ``KeyValueSyncStore/allValues()``.
    case allValues
    /// ``KeyValueSyncStore/setValue(_:forKey:)``.
    case setValue
    /// ``KeyValueSyncStore/removeValue(forKey:)``.
    case removeValue
    /// ``KeyValueSyncStore/synchronize()``.
    case synchronize

    /// The method's name.
    public var description: String {
      switch self {
      case .value: "value(forKey:)"
      case .allValues: "allValues()"
      case .setValue: "setValue(_:forKey:)"
      case .removeValue: "removeValue(forKey:)"
      case .synchronize: "synchronize()"
      }
    }
  }

  /// The store every call is forwarded to.
  public let base: any KeyValueSyncStore
  private let armed = Locked<[Method: [@Sendable () -> Void]]>([:])
  private let fired = Locked<[Method: Int]>([:])

  /// Wraps `base`; with no action armed it behaves exactly as `base`.
  public init(_ base: any KeyValueSyncStore) {
    self.base = base
  }

  /// Runs `action` once, from inside the next call of `method`, after the call has done its
  /// work and before it returns, on the calling thread.
  public func duringNext(_ method: Method, _ action: @escaping @Sendable () -> Void) {
    armed.withLock { $0[method, default: []].append(action) }
  }

  /// How many armed actions have run inside `method` so far.
  public func actionsRun(during method: Method) -> Int {
    fired.withLock { $0[method] ?? 0 }
  }

  /// The base store's value; see ``duringNext(_:_:)``.
  public func value(forKey key: String) -> PropertyListValue? {
    interleaving(.value) { base.value(forKey: key) }
  }

  /// The base store's values; see ``duringNext(_:_:)``.
  public func allValues() -> [String: PropertyListValue] {
    interleaving(.allValues) { base.allValues() }
  }

  /// Writes to the base store; see ``duringNext(_:_:)``.
  public func setValue(_ value: PropertyListValue, forKey key: String) {
    interleaving(.setValue) { base.setValue(value, forKey: key) }
  }

  /// Removes from the base store; see ``duringNext(_:_:)``.
  public func removeValue(forKey key: String) {
    interleaving(.removeValue) { base.removeValue(forKey: key) }
  }

  /// The base store's `synchronize()`; see ``duringNext(_:_:)``.
  @discardableResult
  public func synchronize() -> Bool {
    interleaving(.synchronize) { base.synchronize() }
  }

  /// Observes the base store's external changes.
  public func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
    base.observeExternalChanges(handler)
  }

  /// The base store's answer.
  public var isSignedIn: Bool? { base.isSignedIn }

  private func interleaving<Result>(_ method: Method, _ call: () -> Result) -> Result {
    let result = call()
    let actions = armed.withLock { $0.removeValue(forKey: method) ?? [] }
    guard !actions.isEmpty else { return result }
    LockAudit.assertNoLockHeld(calling: "an action inside \(method)")
    for action in actions { action() }
    fired.withLock { $0[method, default: 0] += actions.count }
    return result
  }
}

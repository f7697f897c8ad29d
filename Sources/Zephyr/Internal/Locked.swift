import Foundation

/// A value guarded by a lock, shaped like the standard library's `Mutex` (which needs
/// newer systems than Zephyr supports).
///
/// This is the only `@unchecked Sendable` type in Zephyr. It is sound for the same reason
/// `Mutex` is: `value` is private, every access happens inside ``withLock(_:)`` while the
/// lock is held, and the value goes in and results come out as `sending`, so a non-`Sendable`
/// value cannot be handed out of the lock and used unguarded.
///
/// Rule of the house (see <doc:Threading>): never call `UserDefaults`,
/// `NotificationCenter`, a store, or user code (log handler, resolver) inside `withLock`.
/// Keep the body a few assignments.
package final class Locked<Value>: @unchecked Sendable {
  private var value: Value
  private let condition = NSCondition()

  package init(_ value: sending Value) {
    self.value = value
  }

  /// Runs `body` with exclusive access to the value, then wakes every thread waiting in
  /// ``withLock(when:_:)`` so that it checks its condition again.
  package func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
    condition.lock()
    #if DEBUG
      LockAudit.adjust(by: 1)
    #endif
    defer {
      #if DEBUG
        LockAudit.adjust(by: -1)
      #endif
      condition.broadcast()
      condition.unlock()
    }
    return try body(&value)
  }

  /// Waits until `ready` holds for the value, or until `deadline`, then runs `body` with
  /// exclusive access, as ``withLock(_:)``, and returns whether `ready` held. The lock is
  /// released while waiting.
  package func withLock<Result>(
    when ready: (Value) -> Bool, until deadline: Date, _ body: (inout sending Value) throws -> sending Result
  ) rethrows -> (ready: Bool, result: Result) {
    condition.lock()
    defer {
      condition.broadcast()
      condition.unlock()
    }
    var isReady = ready(value)
    while !isReady, condition.wait(until: deadline) { isReady = ready(value) }
    if !isReady { isReady = ready(value) }
    #if DEBUG
      LockAudit.adjust(by: 1)
      defer { LockAudit.adjust(by: -1) }
    #endif
    return (isReady, try body(&value))
  }

  /// Waits until `ready` holds for the value, then runs `body` with exclusive access, as
  /// ``withLock(_:)``. The lock is released while waiting.
  package func withLock<Result>(
    when ready: (Value) -> Bool, _ body: (inout sending Value) throws -> sending Result
  ) rethrows -> sending Result {
    condition.lock()
    defer {
      condition.broadcast()
      condition.unlock()
    }
    while !ready(value) { condition.wait() }
    #if DEBUG
      LockAudit.adjust(by: 1)
      defer { LockAudit.adjust(by: -1) }
    #endif
    return try body(&value)
  }
}

import Foundation

/// A value guarded by a lock.
///
/// This is the only `@unchecked Sendable` type in Zephyr. It is sound because `value` is
/// private and every read or write of it happens inside `withLock`, which holds `lock`
/// for the whole access; nothing hands out a reference to the stored value.
package final class Locked<Value>: @unchecked Sendable {
  private var value: Value
  private let lock = NSLock()

  package init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with exclusive access to the value. Keep `body` short and never call
  /// back into code that may take the same lock.
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

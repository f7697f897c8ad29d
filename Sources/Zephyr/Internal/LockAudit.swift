import Foundation

/// Debug builds count, per thread, the ``Locked`` locks the thread holds, and every call
/// out of Zephyr (into `UserDefaults`, a store, `NotificationCenter`, a log handler or a
/// conflict resolver) checks that the count is zero: "never call out while holding a
/// lock" (see <doc:Threading>), enforced by every test run. Release builds compile it away.
package enum LockAudit {
  #if DEBUG
    private static let held = ThreadLocalInt()

    /// Locks the current thread holds.
    package static var depth: Int { held.value }

    static func adjust(by delta: Int) {
      held.value += delta
    }
  #endif

  /// Stops a debug build when the current thread holds a lock while calling out to `what`.
  @inline(__always)
  package static func assertNoLockHeld(
    calling what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
  ) {
    #if DEBUG
      precondition(depth == 0, "Zephyr holds a lock while calling \(what())", file: file, line: line)
    #endif
  }
}

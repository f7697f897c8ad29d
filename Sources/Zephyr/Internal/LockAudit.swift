import Foundation

/// Debug builds count, per thread, the ``Locked`` locks the thread holds and the
/// operation lanes it runs (``OperationLane``, while `.running`), and every call out of
/// Zephyr (into `UserDefaults`, a store, `NotificationCenter`, a log handler or a
/// conflict resolver) checks that both counts are zero: "never call out while holding a
/// lock", and the operation lane counts as one (see <doc:Threading>), enforced by every
/// test run. Release builds compile it away.
package enum LockAudit {
  #if DEBUG
    private static let held = ThreadLocalInt()
    private static let lanes = ThreadLocalInt()

    /// Locks the current thread holds.
    package static var depth: Int { held.value }

    /// Operation lanes the current thread runs and is not calling out of.
    package static var runningLanes: Int { lanes.value }

    static func adjust(by delta: Int) {
      held.value += delta
    }
  #endif

  /// The current thread starts (`1`) or stops (`-1`) running an operation lane without
  /// calling out.
  @inline(__always)
  static func laneRunning(by delta: Int) {
    #if DEBUG
      lanes.value += delta
    #endif
  }

  /// Stops a debug build when the current thread holds a lock, or runs an operation lane
  /// that is not marked as calling out, while calling out to `what`.
  @inline(__always)
  package static func assertNoLockHeld(
    calling what: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
  ) {
    #if DEBUG
      precondition(depth == 0, "Zephyr holds a lock while calling \(what())", file: file, line: line)
      precondition(
        runningLanes == 0,
        "Zephyr's operation calls \(what()) without marking a call-out: a thread arriving meanwhile would wait",
        file: file, line: line)
    #endif
  }
}

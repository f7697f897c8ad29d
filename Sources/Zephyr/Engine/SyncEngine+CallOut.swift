import Foundation

extension SyncEngine {
  /// Runs `body`, a call out of the running operation (to the store, to `UserDefaults`,
  /// reads included, to `NotificationCenter` or to user code), with the lane marked as
  /// calling out for its length: a call arriving from another thread meanwhile is queued
  /// for the operation instead of waiting for it (see ``OperationLane``). The store may be
  /// waiting for that very thread: it posts its change notification from inside a read
  /// or a write and waits for the observers, as Apple's does.
  ///
  /// Outside an operation, or nested in another call-out, it only runs `body`.
  func callingOut<Result>(
    as callOut: OperationLane.Phase = .callingOut, _ body: () throws -> Result
  ) rethrows -> Result {
    let thread = ThreadIdentity.current
    let began = state.withLock { $0.lane.beginCallOut(callOut, thread: thread) }
    defer { if began { state.withLock { $0.lane.endCallOut() } } }
    return try body()
  }
}

import Foundation

/// When a coordinator calls the store's `synchronize()` after batches that wrote to it.
///
/// Apple asks apps to call it sparingly: "upon app launch, or upon returning to the
/// foreground", and notes that uploads are limited to several a minute. A batch that wrote
/// asks for one call (``SyncConfiguration/synchronizeOnChange``); the first is made at
/// once, and later ones at most once per ``SyncConfiguration/synchronizeInterval`` by the
/// configured clock: every batch that wrote within the interval is covered by one call at
/// its end. The launch and foreground calls are made whatever the schedule, and cover the
/// batches before them.
struct SynchronizeSchedule: Sendable, Equatable {
  /// When a batch's call was last made; `nil` before the first.
  private(set) var lastCall: Date?
  /// Whether a batch wrote since the last call.
  private(set) var isPending = false
  /// Whether a timer is armed to make the deferred call.
  private(set) var isTimerArmed = false

  /// What to do now.
  enum Decision: Sendable, Equatable {
    /// Nothing: no call is due, or one is already on its way.
    case none
    /// Call `synchronize()` now.
    case callNow
    /// Arm a timer to look again after this many seconds (and call then).
    case arm(after: TimeInterval)
  }

  /// A batch ended (`wrote`: it wrote to the store), or a timer fired (`timerFired`): is a
  /// call due?
  mutating func decide(wrote: Bool, timerFired: Bool = false, now: Date, interval: TimeInterval) -> Decision {
    if wrote { isPending = true }
    if timerFired { isTimerArmed = false }
    guard isPending else { return .none }
    // A clock set back is taken as the start of a new interval.
    if let lastCall, lastCall > now { self.lastCall = now }
    guard let lastCall, now.timeIntervalSince(lastCall) < interval else {
      isPending = false
      self.lastCall = now
      return .callNow
    }
    guard !isTimerArmed else { return .none }
    isTimerArmed = true
    return .arm(after: lastCall.addingTimeInterval(interval).timeIntervalSince(now))
  }

  /// A launch or foreground call was made: it covers every batch before it.
  mutating func covered() {
    isPending = false
  }
}

import Foundation

/// How local edits reach a push: a `didChangeNotification` or a typed write schedules one
/// coalesced push of local edits on the local-edit queue, which ``run(_:)`` runs.
extension SyncEngine {
  /// A change of this coordinator's `UserDefaults` instance: schedule one coalesced push
  /// of the monitored keys' local edits. The coordinator's own writes are counted on its
  /// own thread, without a lock on its state; a change announced while it writes that is
  /// not its own (an observer's nested write) is pushed after the operation.
  func userDefaultsDidChange() {
    // Announced on the thread of our own write, from inside it: counted without a lock.
    if OwnWriteMarker.noteAnnouncement(for: id) { return }
    schedulePush(diffingDomain: true)
  }

  /// Schedules one coalesced push of local edits on the local-edit queue, unless one is
  /// scheduled already; `diffingDomain`: something changed that names no key (a
  /// `didChangeNotification`), so the push diffs the monitored keys too.
  func schedulePush(diffingDomain: Bool) {
    let schedule = state.withLock { state -> Bool in
      if diffingDomain { state.lane.localEditsPending = true }
      guard !state.lane.flushScheduled else { return false }
      state.lane.flushScheduled = true
      return true
    }
    guard schedule else { return }
    localEditQueue.async { [weak self] in
      self?.run(.localEdits)
    }
  }

  /// Schedules the push of a typed write: after ``SyncConfiguration/coalescingInterval``
  /// on the configured scheduler, sharing one push with every typed write made meanwhile;
  /// at once when the interval is 0, or when a push is already scheduled (the write joins
  /// it).
  func scheduleCoalescedPush() {
    let (interval, scheduler) = state.withLock { state -> (TimeInterval, SyncConfiguration.Scheduler?) in
      let interval = state.configuration.coalescingInterval
      guard interval > 0, !state.lane.flushScheduled else { return (0, nil) }
      guard !state.lane.coalescedPushArmed else { return (interval, nil) }
      state.lane.coalescedPushArmed = true
      return (interval, state.configuration.coalescingScheduler)
    }
    guard interval > 0 else { return schedulePush(diffingDomain: false) }
    // (Armed already: the push it will start carries this write.)
    scheduler?(interval) { [weak self] in self?.pushCoalescedWrites() }
  }

  /// Starts the push that typed writes wait for, if they wait for one.
  func pushCoalescedWrites() {
    let armed = state.withLock { state in
      defer { state.lane.coalescedPushArmed = false }
      return state.lane.coalescedPushArmed
    }
    if armed { schedulePush(diffingDomain: false) }
  }
}

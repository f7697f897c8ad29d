import Foundation

/// What one scenario (or, summed, a design's scenarios) came to.
///
/// Every edit and delete the workload issued is in `edits`, and lands in exactly one of
/// the fates below, so that
///
///     edits = pushed + supersededByOwnEdit + removalsOfAbsentKeys
///           + overwrittenBeforePush + yieldedToCloudHistory + replacedAtRelaunch
///           + neverPushed
///
/// A design cannot keep `lostWrites` low by not pushing an edit, or by giving it up for
/// the store's value: such edits show up as `neverPushed`, `yieldedToCloudHistory` or
/// `replacedAtRelaunch` (and, when the value that replaced them causally precedes them,
/// in the matching `…CausallyLater` count), and an edit that never reached the server
/// supersedes nothing.
struct PeerTally {
  /// Edit and delete steps issued, the same for every design.
  var edits = 0
  /// The server held the write before anything replaced it on its device.
  var pushed = 0
  /// Its device's next write of the key came first (two edits before one upload).
  var supersededByOwnEdit = 0
  /// Delete steps on a device that held no value: issued, a no-op there, no write made.
  var removalsOfAbsentKeys = 0
  /// Replaced before its push by an inbound event (``PeerReplacement/inboundEvent``).
  var overwrittenBeforePush = 0
  /// …of which the replacing value was a write that causally precedes it.
  var overwrittenCausallyLater = 0
  /// Replaced before its push by its own device's push or sync, which took the store's
  /// value (``PeerReplacement/ownPushOrSync``).
  var yieldedToCloudHistory = 0
  /// …of which the replacing value was a write that causally precedes it.
  var yieldedCausallyLater = 0
  /// Replaced before its push by a relaunch (``PeerReplacement/relaunch``).
  var replacedAtRelaunch = 0
  /// …of which the replacing value was a write that causally precedes it.
  var relaunchCausallyLater = 0
  /// Never reached the server and was not replaced: the design never sent it.
  var neverPushed = 0
  /// Keys whose final value, on any device, is a write a causally later pushed write
  /// superseded (see ``PeerHistory/isLost(key:final:)``).
  var lostWrites = 0
  /// `lostWrites` of scenarios whose devices agreed at the end (a scenario that did not
  /// converge is also in `notConverged`).
  var lostWritesConverged = 0
  var resurrectedDeletes = 0
  var notConverged = 0
  var storeWrites = 0
  var bytes = 0
  var synchronizeCalls = 0
  var extraStoreKeys = 0
  /// What went wrong, for `zephyr-bench peers explain <seed>`.
  var findings: [String] = []

  /// Counts one write's fate.
  mutating func count(_ fate: PeerFate) {
    switch fate {
    case .pushed: pushed += 1
    case .supersededByOwnEdit: supersededByOwnEdit += 1
    case .neverPushed: neverPushed += 1
    case .replaced(.inboundEvent, let later):
      overwrittenBeforePush += 1
      if later { overwrittenCausallyLater += 1 }
    case .replaced(.ownPushOrSync, let later):
      yieldedToCloudHistory += 1
      if later { yieldedCausallyLater += 1 }
    case .replaced(.relaunch, let later):
      replacedAtRelaunch += 1
      if later { relaunchCausallyLater += 1 }
    }
  }

  /// The fates, which add up to `edits`.
  var accounted: Int {
    pushed + supersededByOwnEdit + removalsOfAbsentKeys + overwrittenBeforePush + yieldedToCloudHistory
      + replacedAtRelaunch + neverPushed
  }

  static func + (left: PeerTally, right: PeerTally) -> PeerTally {
    var sum = left
    let fields: [WritableKeyPath<PeerTally, Int>] = [
      \.edits, \.pushed, \.supersededByOwnEdit, \.removalsOfAbsentKeys, \.overwrittenBeforePush,
      \.overwrittenCausallyLater, \.yieldedToCloudHistory, \.yieldedCausallyLater, \.replacedAtRelaunch,
      \.relaunchCausallyLater, \.neverPushed, \.lostWrites, \.lostWritesConverged, \.resurrectedDeletes,
      \.notConverged, \.storeWrites, \.bytes, \.synchronizeCalls,
    ]
    for field in fields { sum[keyPath: field] += right[keyPath: field] }
    sum.extraStoreKeys = max(left.extraStoreKeys, right.extraStoreKeys)
    sum.findings += right.findings
    return sum
  }
}

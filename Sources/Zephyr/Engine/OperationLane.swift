import Foundation

/// One unit of work a coordinator runs: each reads what it needs, then reconciles keys as
/// one batch (see ``SyncCoordinator/reconcile(_:local:remote:policy:_:)``).
enum Request: Sendable, Equatable {
  /// ``SyncCoordinator/sync()``.
  case sync
  /// ``SyncCoordinator/sync(keys:)-([String])``.
  case syncKeys([String])
  /// An external change from the store.
  case event(ExternalChange)
  /// A `didChangeNotification` said the suite changed: push the monitored keys' edits.
  case localEdits
  /// Pulls a crash left written ahead but maybe not applied, settled at launch.
  case settlePendingPulls
  /// Protected data became available: run what waited for it (see
  /// ``SyncCoordinator/admitsProtectedData(_:)``).
  case protectedDataAvailable
}

/// Who runs an operation now, and what waits for it.
///
/// Operations run one at a time, but no lock is held while one runs: the running thread
/// owns the lane. Another thread that calls in waits for the lane, except while the
/// owner calls out: to the store, to `UserDefaults` (reads included), to
/// `NotificationCenter`, or to user code (the conflict resolver, custom strategies, the
/// clock). Any of those may make the owner wait for another thread: the store posts its
/// change notification on a thread of its own and waits for the observers, a
/// `UserDefaults` write posts `didChangeNotification` synchronously, and an observer on an
/// `OperationQueue` makes the poster wait for it. Waiting then could deadlock, so a call
/// arriving during a call-out, and any call made from inside the running operation on its
/// own thread, is queued here instead and run by the owner before it lets go.
///
/// Every call-out goes through ``SyncCoordinator/callingOut(as:_:)``. Debug builds check it:
/// ``LockAudit`` stops a test that calls out while its lane is `.running`.
struct OperationLane: Sendable {
  /// Where the operation stands.
  enum Phase: Sendable, Equatable {
    /// No operation runs.
    case idle
    /// An operation runs on ``owner``'s thread.
    case running
    /// The running operation calls out to the store, `UserDefaults`, `NotificationCenter`
    /// or the clock, any of which may wait for another thread.
    case callingOut
    /// The running operation calls its conflict resolver or a custom strategy (user code,
    /// which may wait for another thread too). A call it makes into the coordinator is
    /// not run.
    case inResolver
  }

  private(set) var phase = Phase.idle
  /// The thread running the operation (``ThreadIdentity``): a call from that thread is a
  /// call from inside the operation. Never a task-local value, which a `Task {}` would
  /// inherit. `nil` while ``phase`` is idle.
  private(set) var owner: Int?
  /// The operation's own `UserDefaults` writes, with their announcements (see
  /// ``OwnWrites``).
  var ownWrites = OwnWrites()
  /// Threads handing log lines to the log handler now.
  var emittingThreads: Set<Int> = []
  /// Requests queued for the running operation to run before it lets go.
  var queued: [Request] = []
  /// How many times the lane was let go: a caller that queued its request on another
  /// thread's lane knows it ran once this grows.
  private(set) var releases: UInt64 = 0
  /// A `didChangeNotification` arrived that no push has looked at yet.
  var localEditsPending = false
  /// A push of local edits is scheduled on the local-edit queue.
  var flushScheduled = false
  /// A typed write waits for the coalesced push the scheduler will start (see
  /// ``SyncConfiguration/coalescingInterval``).
  var coalescedPushArmed = false
  /// Typed writes not pushed yet, by key: pushed with the next push of local edits,
  /// without reading the domain.
  var typedWrites: [String: TypedWrite] = [:]
  /// Typed keys whose first-use reconcile is marked and has not finished (a first read
  /// waits for it, see ``SyncCoordinator/useReconciling(_:)``).
  var firstUseReconciles: Set<String> = []
  /// Per key, what element edits and batches need to know of each other's writes (see
  /// ``KeyWrites``).
  var keyWrites: [String: KeyWrites] = [:]

  /// Whether an operation is running.
  var isBusy: Bool { phase != .idle }

  /// Whether the running operation is calling out to code that may wait for another
  /// thread (see ``Phase/callingOut`` and ``Phase/inResolver``).
  var isCallingOut: Bool { phase == .callingOut || phase == .inResolver }

  /// Whether the running operation is calling its conflict resolver.
  var isInResolver: Bool { phase == .inResolver }

  /// Whether a caller on another thread can go on now: the lane is free (it takes it), or
  /// the running operation is calling out (it queues its request there,
  /// since waiting could deadlock). Otherwise it waits.
  var admitsCaller: Bool { phase != .running }

  /// Whether `thread` runs the operation.
  func isOwned(by thread: Int) -> Bool { isBusy && owner == thread }

  /// `thread`, the current thread, starts an operation on the free lane.
  mutating func take(for thread: Int) {
    phase = .running
    owner = thread
    LockAudit.laneRunning(by: 1)
  }

  /// The operation ended and nothing is queued: the lane is free. Called on the owner's
  /// thread.
  mutating func release() {
    if phase == .running { LockAudit.laneRunning(by: -1) }
    phase = .idle
    owner = nil
    releases += 1
  }

  /// The running operation, on `thread`, the current thread, calls out (`.callingOut` or
  /// `.inResolver`) until ``endCallOut()``. `false` when nothing changed: the lane is not
  /// running on `thread` (an operation of the lane calling out already, or a call from
  /// outside any operation); that call then ends no call-out either.
  mutating func beginCallOut(_ callOut: Phase, thread: Int) -> Bool {
    guard phase == .running, owner == thread else { return false }
    phase = callOut
    LockAudit.laneRunning(by: -1)
    return true
  }

  /// The running operation is back from the call out ``beginCallOut(_:thread:)`` began.
  mutating func endCallOut() {
    guard isCallingOut else { return }
    phase = .running
    LockAudit.laneRunning(by: 1)
  }

  /// Queues `request` unless it is queued already (a duplicate adds nothing).
  mutating func queue(_ request: Request) {
    if request == .localEdits || request == .sync, queued.contains(request) { return }
    queued.append(request)
  }
}

/// A typed write waiting for its push (see ``SyncCoordinator/writeTyped(_:for:)``).
enum TypedWrite: Sendable, Equatable {
  /// The value written to `UserDefaults` (`nil`: the key was removed), pushed as it is.
  case written(PropertyListValue?)
  /// Zephyr wrote the key itself since (a pull): the push reads it again.
  case reread
}

extension EngineState {
  /// Takes the lane for `request` when it is free (`true`); otherwise, the running
  /// operation calling out, queues `request` for it (`false`).
  mutating func takeLaneOrQueue(_ request: Request, thread: Int) -> Bool {
    guard lane.isBusy else {
      lane.take(for: thread)
      return true
    }
    lane.queue(request)
    debug("\(request.callName) while another thread writes UserDefaults: queued for that operation")
    return false
  }
}

/// One key's writes to `UserDefaults` in flight or made, by Zephyr's batches and by typed
/// writes, so that neither replaces the other unseen. An element edit reads the key,
/// edits the set and writes it back outside the lane; a batch reads the key, decides,
/// and writes it from the lane. Each side notes here what it is about to write, and
/// checks, before it writes, that nothing the other side wrote could have been missed by
/// its read. No lock is held across a write: the checks and notes are made under the
/// engine's lock, the writes after it.
struct KeyWrites: Sendable, Equatable {
  /// The batch's own writes of the key made so far.
  var batchWrites: UInt64 = 0
  /// The value a batch is writing now (`.some(nil)`: removing the key), until its write
  /// returns.
  var batchWriting: PropertyListValue??
  /// Typed writes recorded so far.
  var typedWrites: UInt64 = 0
  /// Typed writes recorded whose write has not returned yet.
  var typedLanding = 0
  /// The value of the typed write recorded last (`.some(nil)`: a removal).
  var lastTyped: PropertyListValue??

  /// Records a typed write of `value`, landing until ``typedWriteReturned()``.
  mutating func recordTypedWrite(_ value: PropertyListValue?) {
    typedWrites += 1
    typedLanding += 1
    lastTyped = .some(value)
  }

  mutating func typedWriteReturned() {
    typedLanding -= 1
  }

  /// What an element edit notes before it reads the key.
  var editBase: EditBase {
    EditBase(batchWrites: batchWrites, typedWrites: typedWrites, typedLanding: typedLanding > 0)
  }

  struct EditBase: Sendable, Equatable {
    var batchWrites: UInt64
    var typedWrites: UInt64
    /// Whether a typed write was landing: the read must show it.
    var typedLanding: Bool
  }

  /// Whether an element edit that noted `base`, then read `read`, may write: no batch
  /// write of the key was made since and none is in flight, and no other typed write
  /// was recorded since and none was landing, unless the read shows that write landed
  /// (an observer of the write, running on its thread or waited for by it, reads it).
  func admitsEdit(from base: EditBase, read: PropertyListValue?) -> Bool {
    guard batchWrites == base.batchWrites, typedWrites == base.typedWrites else { return false }
    if base.typedLanding, LedgerEntry.Agreed(lastTyped ?? nil) != LedgerEntry.Agreed(read) { return false }
    guard let writing = batchWriting else { return true }
    return LedgerEntry.Agreed(writing) == LedgerEntry.Agreed(read)
  }

  /// What a batch notes before it reads the key to decide a write of it: the typed writes
  /// recorded, or `nil` while one is landing (the read could miss it).
  var batchBase: UInt64? { typedLanding > 0 ? nil : typedWrites }

  /// Whether a batch that noted `base` before its read may write the key now: no typed
  /// write was recorded since, or was landing then (`base` is `nil`). (A write landing now
  /// was recorded since, or was landing then: both counts move under one lock.)
  func admitsBatchWrite(from base: UInt64?) -> Bool {
    base == typedWrites
  }
}

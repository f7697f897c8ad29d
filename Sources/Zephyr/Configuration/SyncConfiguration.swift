import Foundation

/// How a ``SyncCoordinator`` behaves.
///
/// ```swift
/// var configuration = SyncConfiguration()
/// configuration.debugEnabled = true
/// configuration.tombstoneLifetime = 90 * 24 * 60 * 60
/// let coordinator = SyncCoordinator(defaults: .standard, store: UbiquitousStore.default,
///                                   configuration: configuration)
/// ```
public struct SyncConfiguration: Sendable {
  /// This device's short, stable id, written into every record it pushes. When `nil`,
  /// Zephyr generates one (six lowercase letters and digits) on first use and persists it
  /// in a `device-id` file beside the process's ledger (in the ledger folder), never in
  /// `UserDefaults` and never synced.
  ///
  /// Two writes of one key at the same generation are ordered by this id, so every device
  /// picks the same winner (see <doc:MergeSemantics>). Give each device its own id; tests
  /// set one for readable logs and predictable ties. An empty id, or one longer than 64
  /// characters, is not used: a generated one takes its place and ``SyncStatus/notes``
  /// says so.
  public var deviceID: String?

  /// Whether every decision is logged (`push theme g7 (local edit)`). Warnings, such as
  /// a refused key, are logged either way.
  public var debugEnabled: Bool

  /// Whether the store's `synchronize()` is called after batches that wrote to it (Zephyr
  /// 5's `syncUbiquitousKeyValueStoreOnChange`). On by default.
  ///
  /// Apple asks for the call "sparingly": the first batch calls it at once, and later ones
  /// share at most one call per ``synchronizeInterval``, made at the end of the interval.
  /// Whatever this says, the coordinator also calls it at launch and when the app returns
  /// to the foreground, as Apple recommends.
  public var synchronizeOnChange: Bool

  /// The shortest time between two of the `synchronize()` calls that batches ask for
  /// (see ``synchronizeOnChange``), by ``clock``: 15 seconds by default (Apple limits
  /// uploads to several a minute). Every batch that writes within it is covered by one call
  /// at its end; `0` calls once per batch that wrote, as Zephyr 5 did.
  public var synchronizeInterval: TimeInterval

  /// How long a typed write (a set through a ``SyncKey``, an ``SyncCoordinator/insert(_:into:)``
  /// and its kin) waits before it is pushed, so that edits made in quick succession (an
  /// app marking articles read while the user scrolls) share one store write: 1 second by
  /// default. The value is in `UserDefaults` at once; only the push waits. `0` pushes each
  /// write as soon as the local-edit queue is free, as before.
  ///
  /// Nothing is lost to the wait: ``SyncCoordinator/sync()`` pushes what is waiting, as
  /// does the next launch's `sync()` if the process ends first, and
  /// ``SyncCoordinator/waitForPendingLocalEdits()`` pushes it at once. Edits that
  /// `UserDefaults` announces (string keys) do not wait.
  public var coalescingInterval: TimeInterval = 1

  /// Runs an action after a delay: how a coalesced push (see ``coalescingInterval``) waits.
  /// `DispatchQueue.asyncAfter` on a global queue by default; tests inject one that keeps
  /// the action until they run it, so that no test sleeps (a `ManualScheduler` of the
  /// test's own, as in <doc:LargeCollections>):
  ///
  /// ```swift
  /// configuration.coalescingScheduler = { _, push in scheduler.schedule(push) }
  /// ```
  public var coalescingScheduler: Scheduler = { delay, action in
    DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + delay, execute: action)
  }

  /// Runs `action` once, `delay` seconds from now, on a thread of its choosing.
  public typealias Scheduler = @Sendable (_ delay: TimeInterval, _ action: @escaping @Sendable () -> Void) -> Void

  /// How long a tombstone stays in the store before `sync()` removes it to give its key
  /// back: 30 days by default; `nil` keeps tombstones forever. This device's ledger
  /// remembers the delete, so it never pushes the value again.
  ///
  /// > Warning: a device that stays offline longer than this, still holding the value,
  /// > pushes it again when it returns: the delete is undone. Choose a lifetime longer
  /// > than any device is likely to stay away.
  public var tombstoneLifetime: TimeInterval?

  /// The limits checked before every store write: by default the store's own
  /// (``KeyValueSyncStore/limits``: ``StoreLimits/iCloud`` for the key-value store,
  /// ``StoreLimits/cloudKit`` for `CloudKitStore`), which a coordinator adopts when it
  /// is created or given this configuration. Setting them overrides the store's; tests
  /// may pass smaller ones. Read before a coordinator adopted a store's, it is
  /// ``StoreLimits/iCloud``. See <doc:LimitsAndDiagnostics>.
  public var limits: StoreLimits {
    get { chosenLimits ?? .iCloud }
    set { chosenLimits = newValue }
  }
  /// The limits set explicitly or adopted from a store; `nil` until either happens.
  private var chosenLimits: StoreLimits?

  /// The share of the byte or key limit above which a warning is logged, once per
  /// crossing: 0.8 (80%) by default.
  public var warningThreshold: Double

  /// Decides conflicts (both sides changed a key to different values). When `nil`,
  /// `sync()` keeps the local value and an inbound store event takes the remote one.
  ///
  /// When set, it decides every conflict of a key merged last-writer-wins, in `sync()` and
  /// in inbound events alike; return ``ConflictResolution/usePolicy`` for keys it does not
  /// handle. A key with a ``mergeStrategies`` entry is merged by its strategy instead (a
  /// `.custom` one for your own rule). It runs on the operation's thread with no lock
  /// held; keep it pure and fast.
  ///
  /// Why two hooks take the same ``ConflictResolver``: this one is one device's decision
  /// between its value and the store's, for every last-writer-wins key at once; its
  /// outcome is pushed as a new write, so it may prefer this device (`.keepLocal`). A
  /// ``MergeStrategy/custom(_:)`` strategy is declared per key and folded by every device
  /// over the key's concurrent writes, with no push to agree, so it must give every device
  /// the same value. A rule written for one runs in the other.
  ///
  /// ```swift
  /// configuration.conflictResolver = { conflict in
  ///   if conflict.key == "highScore", case .integer(let mine)? = conflict.local,
  ///     case .integer(let theirs)? = conflict.remote
  ///   {
  ///     return .merged(.integer(max(mine, theirs)))
  ///   }
  ///   return .usePolicy
  /// }
  /// ```
  public var conflictResolver: ConflictResolver?

  /// How each key merges when both sides changed it, by key. A key not listed here uses
  /// its typed key's `merge:` from the key's first use with a coordinator (an entry here
  /// wins; the coordinator keeps the typed key's strategy itself, so this reads back as
  /// you set it), else ``MergeStrategy/lastWriterWins``. List a key here to have its
  /// strategy from launch. Every device should give a key the same strategy.
  ///
  /// ```swift
  /// configuration.mergeStrategies["favorites"] = .set
  /// configuration.mergeStrategies["highScore"] = .max
  /// ```
  public var mergeStrategies: [String: MergeStrategy]

  /// The most elements each `.set` key keeps, by key name: the string-keyed form of
  /// ``SyncKey/Merge/set(capacity:)``, whose capacity applies from a typed key's first use
  /// unless this names the key (without being written here). Keys whose strategy is not
  /// `.set` ignore it.
  ///
  /// ```swift
  /// configuration.mergeStrategies["read"] = .set
  /// configuration.setCapacities["read"] = 20_000
  /// ```
  public var setCapacities: [String: Int] = [:]
  /// The keys whose records are stored compressed in the store, by key: the string-keyed
  /// form of a typed key's `compressed: true` (which adds to this set without writing
  /// into it). Empty by default.
  ///
  /// ```swift
  /// configuration.compressedKeys = ["starred"]
  /// ```
  ///
  /// Only the store's copy is compressed: `UserDefaults` keeps the plain value, so
  /// `@AppStorage` and `UserDefaults` read it as before. A record is stored compressed
  /// only when that makes it smaller (else it is stored plain, and the debug log says
  /// so). Every device reads a compressed record whatever it lists here, on every
  /// platform; a Zephyr build from before compressed records leaves such a key alone,
  /// so update every device first. See <doc:LimitsAndDiagnostics#Compressed-keys>.
  public var compressedKeys: Set<String> = []

  /// Receives log messages. When `nil`, messages go to `os.Logger` (subsystem
  /// `Zephyr`) on Apple platforms and to standard error elsewhere.
  public var logHandler: LogHandler?

  /// The folder for the ledger file. When `nil`, the user's Application Support folder
  /// (`~/.local/share` on Linux), subfolder `Zephyr`. Each process keeps its ledger and
  /// device id in a subfolder of its own (see ``processIdentity``), so an app and its
  /// extensions may all be given one folder of their app-group container.
  public var ledgerDirectory: URL?

  /// Which of the app's processes this is (the app, a widget, a share extension), for
  /// processes that share a ledger folder: each keeps its own ledger and device id in the
  /// subfolder `process-<identity>` of ``ledgerDirectory``, so that one never overwrites another's history
  /// or writes under its name. `nil` (the default): the bundle identifier (an extension's
  /// differs from its app's), else the process name. Tests that model several processes
  /// in one set it per coordinator.
  public var processIdentity: String?

  /// Whether other processes sync the same suite: an app and its extensions on one
  /// app-group suite, each with its own container and so its own ledger. `nil` (the
  /// default) means yes for suites whose name begins with `group.`; set it for an app
  /// group named otherwise (macOS team-prefixed groups).
  ///
  /// When on, each key's last agreed state is also kept in the suite under a bookkeeping
  /// key (`Zephyr.agreed.<key>`, never synced), and every process takes the latest one
  /// before it decides. So a process whose ledger is behind never mistakes another
  /// process's edit for its own, or the other process's older record for news: nothing
  /// either of them wrote is lost. Costs one more `UserDefaults` write per synced change.
  public var sharedByProcesses: Bool?

  /// The clock used for tombstone dates, status times, tombstone expiry and the
  /// ``synchronizeInterval``. Tests inject one; generations never depend on it. Called on the operation's thread with no lock
  /// held.
  public var clock: @Sendable () -> Date

  /// Whether each record this device writes carries its writer's wall-clock time (6
  /// bytes more per record), so that devices receiving it measure
  /// ``SyncMetrics/deliveryDelay``. Off by default.
  ///
  /// Every device of this Zephyr version or later reads such records, whether it
  /// measures or not; a Zephyr build from before this setting takes them for malformed
  /// and leaves the key alone (see <doc:LimitsAndDiagnostics>), so turn it on once every
  /// device runs this version. Only a device that turns it on reports delays.
  public var measuresDeliveryDelay = false

  /// Waits for a duration: how ``SyncCoordinator/waitForInitialDownload(timeout:)``
  /// measures its timeout. `Task.sleep(for:)` by default; tests inject one that returns
  /// when they say (at once, for a device that never gets the download), so that no test
  /// sleeps. It may throw when its task is cancelled.
  public var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

  /// Creates a configuration; every parameter has the default described on its property.
  public init(
    deviceID: String? = nil,
    debugEnabled: Bool = false,
    synchronizeOnChange: Bool = true,
    synchronizeInterval: TimeInterval = 15,
    tombstoneLifetime: TimeInterval? = 30 * 24 * 60 * 60,
    limits: StoreLimits? = nil,
    warningThreshold: Double = 0.8,
    conflictResolver: ConflictResolver? = nil,
    mergeStrategies: [String: MergeStrategy] = [:],
    logHandler: LogHandler? = nil,
    ledgerDirectory: URL? = nil,
    clock: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.deviceID = deviceID
    self.debugEnabled = debugEnabled
    self.synchronizeOnChange = synchronizeOnChange
    self.synchronizeInterval = synchronizeInterval
    self.tombstoneLifetime = tombstoneLifetime
    self.chosenLimits = limits
    self.warningThreshold = warningThreshold
    self.conflictResolver = conflictResolver
    self.mergeStrategies = mergeStrategies
    self.logHandler = logHandler
    self.ledgerDirectory = ledgerDirectory
    self.clock = clock
  }
}

extension SyncConfiguration {
  /// This configuration, with `store`'s limits unless limits were set explicitly.
  func adoptingLimits(of store: any KeyValueSyncStore) -> SyncConfiguration {
    guard chosenLimits == nil else { return self }
    var adopted = self
    adopted.chosenLimits = store.limits
    return adopted
  }
}

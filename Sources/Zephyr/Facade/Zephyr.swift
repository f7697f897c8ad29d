import Foundation

/// The static facade: sync `UserDefaults` through iCloud with one line.
///
/// ```swift
/// Zephyr[Settings.theme] = "dark"                 // a typed key: see <doc:TypedKeys>
/// Zephyr.sync(keys: "theme", "fontSize")          // once, at launch
/// Zephyr.addKeysToBeMonitored(keys: "theme", "fontSize")   // and from then on
/// ```
///
/// Every call forwards to ``shared``, one ``SyncCoordinator`` over `UserDefaults.standard`
/// and the iCloud key-value store (`UbiquitousStore.default` on Apple platforms). Use
/// coordinators directly for several suites, or in tests with `ZephyrTesting.SimulatedCloud`.
///
/// Call ``sync()`` at launch and whenever the app becomes active; Zephyr does not observe
/// the app's life cycle. See <doc:GettingStarted>.
///
/// ## Topics
///
/// ### Syncing
///
/// - ``sync()``
/// - ``sync(keys:)-(String...)``
/// - ``sync(keys:)-([String])``
/// - ``sync(keys:userDefaults:suiteName:)-(String...,_,_)``
/// - ``sync(keys:userDefaults:suiteName:)-([String],_,_)``
///
/// ### Typed keys
///
/// - ``subscript(_:)``
/// - ``removeValue(for:)``
/// - ``changes(of:)``
///
/// ### Monitoring keys
///
/// - ``addKeysToBeMonitored(keys:)-(String...)``
/// - ``addKeysToBeMonitored(keys:)-([String])``
/// - ``removeKeysFromBeingMonitored(keys:)-(String...)``
/// - ``removeKeysFromBeingMonitored(keys:)-([String])``
///
/// ### Changes from other devices
///
/// - ``keysDidChangeOnCloudNotification``
/// - ``changedKeysUserInfoKey``
///
/// ### Suites and settings
///
/// - ``setUserDefaultsSuite(to:suiteName:)``
/// - ``shared``
/// - ``debugEnabled``
/// - ``syncUbiquitousKeyValueStoreOnChange``
///
/// ### Launch
///
/// - ``initialDownload``
/// - ``waitForInitialDownload(timeout:)``
///
/// ### Diagnostics
///
/// - ``status``
public enum Zephyr {
  /// Posted on the main queue after inbound changes were written to `UserDefaults`,
  /// once per batch, with the coordinator as its object and the keys whose local value
  /// actually changed under ``changedKeysUserInfoKey``.
  ///
  /// ```swift
  /// NotificationCenter.default.addObserver(
  ///   forName: Zephyr.keysDidChangeOnCloudNotification, object: nil, queue: .main
  /// ) { note in
  ///   let keys = note.userInfo?[Zephyr.changedKeysUserInfoKey] as? [String] ?? []
  ///   print("updated from iCloud:", keys)
  /// }
  /// ```
  public static let keysDidChangeOnCloudNotification = Notification.Name("ZephyrKeysDidChangeOnCloudNotification")

  /// The `userInfo` key of ``keysDidChangeOnCloudNotification``: a `[String]`, sorted.
  public static let changedKeysUserInfoKey = "ZephyrChangedKeys"

  /// The shared coordinator, once created (internal for the facade's tests).
  static let sharedCoordinator = Locked<SyncCoordinator?>(nil)
  /// The configuration the facade creates ``shared`` with, holding the flags set through
  /// the facade (``debugEnabled``, ``syncUbiquitousKeyValueStoreOnChange``) before it
  /// exists: so that setting them first (as Zephyr 5 apps do, before
  /// `setUserDefaultsSuite`) does not create a coordinator over `UserDefaults.standard`.
  static let pendingConfiguration = Locked(SyncConfiguration())

  /// The coordinator every facade call forwards to. Created on first use over
  /// `UserDefaults.standard` and the platform's store (iCloud on Apple platforms, an
  /// in-process store elsewhere). Assign your own to change the store or configuration.
  public static var shared: SyncCoordinator {
    get {
      if let coordinator = sharedCoordinator.withLock({ $0 }) { return coordinator }
      // Created outside the lock: its launch writes UserDefaults, whose observers may call
      // back into the facade. Should two threads race here, the first one stored wins.
      let pending = pendingConfiguration.withLock { $0 }
      let created = SyncCoordinator(store: makeDefaultStore(), configuration: pending)
      let stored = sharedCoordinator.withLock { coordinator in
        if let coordinator { return coordinator }
        coordinator = created
        return created
      }
      if stored === created { applyFlagsChanged(since: pending, to: created) }
      return stored
    }
    set { sharedCoordinator.withLock { $0 = newValue } }
  }

  /// Reconciles the app's whole persistent domain with iCloud; see
  /// ``SyncCoordinator/sync()``.
  ///
  /// ```swift
  /// Zephyr.sync()
  /// ```
  public static func sync() {
    shared.sync()
  }

  /// Reconciles only `keys`; see ``SyncCoordinator/sync(keys:)-([String])``. No keys
  /// reconciles the whole domain, as in Zephyr 5.
  ///
  /// ```swift
  /// Zephyr.sync(keys: "MyFirstKey", "MySecondKey")
  /// ```
  public static func sync(keys: String...) {
    shared.sync(keys: keys)
  }

  /// Reconciles only `keys`; see ``SyncCoordinator/sync(keys:)-([String])``. An empty
  /// list reconciles the whole domain, as in Zephyr 5.
  public static func sync(keys: [String]) {
    shared.sync(keys: keys)
  }

  /// Switches to `userDefaults` (see ``setUserDefaultsSuite(to:suiteName:)``), then
  /// reconciles `keys`, or the whole domain when none are given. Zephyr 5's call.
  ///
  /// ```swift
  /// let suite = UserDefaults(suiteName: "group.com.example.app-name")!
  /// Zephyr.sync(keys: "theme", userDefaults: suite, suiteName: "group.com.example.app-name")
  /// ```
  public static func sync(keys: String..., userDefaults: UserDefaults, suiteName: String? = nil) {
    sync(keys: keys, userDefaults: userDefaults, suiteName: suiteName)
  }

  /// Switches to `userDefaults`, then reconciles `keys` (the whole domain when empty).
  /// Zephyr 5's call; see ``sync(keys:userDefaults:suiteName:)-(String...,_,_)``.
  public static func sync(keys: [String], userDefaults: UserDefaults, suiteName: String? = nil) {
    setUserDefaultsSuite(to: userDefaults, suiteName: suiteName)
    shared.sync(keys: keys)
  }

  /// Applies inbound changes and local edits of `keys` automatically from now on.
  ///
  /// ```swift
  /// Zephyr.addKeysToBeMonitored(keys: "MyFirstKey", "com.example.theme")
  /// ```
  public static func addKeysToBeMonitored(keys: String...) {
    shared.addKeysToBeMonitored(keys: keys)
  }

  /// Applies inbound changes and local edits of `keys` automatically from now on.
  public static func addKeysToBeMonitored(keys: [String]) {
    shared.addKeysToBeMonitored(keys: keys)
  }

  /// Stops applying changes of `keys` automatically.
  ///
  /// ```swift
  /// Zephyr.removeKeysFromBeingMonitored(keys: "MyFirstKey")
  /// ```
  public static func removeKeysFromBeingMonitored(keys: String...) {
    shared.removeKeysFromBeingMonitored(keys: keys)
  }

  /// Stops applying changes of `keys` automatically.
  public static func removeKeysFromBeingMonitored(keys: [String]) {
    shared.removeKeysFromBeingMonitored(keys: keys)
  }

  /// Monitors every key that starts with `prefix`, as keys appear; see
  /// ``SyncCoordinator/addKeysToBeMonitored(prefix:)``.
  ///
  /// ```swift
  /// Zephyr.addKeysToBeMonitored(prefix: "account.v2.")   // account.v2.42, account.v2.43, …
  /// ```
  public static func addKeysToBeMonitored(prefix: String) {
    shared.addKeysToBeMonitored(prefix: prefix)
  }

  /// Stops monitoring the keys under `prefix`; see
  /// ``SyncCoordinator/removeKeysFromBeingMonitored(prefix:)``.
  ///
  /// ```swift
  /// Zephyr.removeKeysFromBeingMonitored(prefix: "account.v2.")
  /// ```
  public static func removeKeysFromBeingMonitored(prefix: String) {
    shared.removeKeysFromBeingMonitored(prefix: prefix)
  }

  /// Syncs another suite, such as an app group's, instead of `UserDefaults.standard`.
  ///
  /// Replaces ``shared`` with a coordinator over `suite` and the same store, keeping the
  /// configuration, the monitored keys and prefixes. Call it before the first sync.
  /// Setting the suite the shared coordinator already uses, under the same name, changes
  /// nothing, even through another `UserDefaults` instance of it.
  ///
  /// Pass `suiteName` for any suite but `.standard`: `UserDefaults` does not tell a
  /// suite's name, and without it full ``sync()`` cannot read the suite's persistent
  /// domain, so it covers only the monitored keys and those the store and the ledger know
  /// (``SyncStatus/notes`` says so).
  ///
  /// ```swift
  /// let suite = UserDefaults(suiteName: "group.com.example.app-name")!
  /// Zephyr.setUserDefaultsSuite(to: suite, suiteName: "group.com.example.app-name")
  /// ```
  public static func setUserDefaultsSuite(to suite: UserDefaults, suiteName: String? = nil) {
    // Peek rather than read `shared`, which would first create a coordinator over
    // `UserDefaults.standard` and write bookkeeping keys into a domain the app never syncs.
    let previous = sharedCoordinator.withLock { $0 }
    // A named suite is the same suite whatever the instance (an app that creates
    // `UserDefaults(suiteName:)` anew at each call keeps its coordinator and its streams);
    // an unnamed one is known by its instance only.
    if let previous,
      previous.engine.domain.persistentName == UserDefaultsDomain(defaults: suite, suiteName: suiteName).persistentName,
      suiteName != nil || previous.engine.domain.isBacked(by: suite)
    {
      return
    }
    let pending = pendingConfiguration.withLock { $0 }
    let replacement = SyncCoordinator(
      defaults: suite, suiteName: suiteName, store: previous?.store ?? makeDefaultStore(),
      configuration: previous?.configuration ?? pending)
    replacement.addKeysToBeMonitored(keys: Array(previous?.monitoredKeys ?? []))
    for prefix in previous?.monitoredPrefixes ?? [] { replacement.addKeysToBeMonitored(prefix: prefix) }
    shared = replacement
    if previous == nil { applyFlagsChanged(since: pending, to: replacement) }
  }

  /// The configuration flags the facade sets.
  private static var flags: [WritableKeyPath<SyncConfiguration, Bool>] { [\.debugEnabled, \.synchronizeOnChange] }

  /// A flag set while `coordinator` was being created from `read` (it saw no coordinator
  /// yet, and only recorded itself) reaches the coordinator now that it is stored.
  private static func applyFlagsChanged(since read: SyncConfiguration, to coordinator: SyncCoordinator) {
    let latest = pendingConfiguration.withLock { $0 }
    let changed = flags.filter { latest[keyPath: $0] != read[keyPath: $0] }
    guard !changed.isEmpty else { return }
    var configuration = coordinator.configuration
    for flag in changed { configuration[keyPath: flag] = latest[keyPath: flag] }
    coordinator.configuration = configuration
  }

  /// Whether every decision is logged; see ``SyncConfiguration/debugEnabled``. Set before
  /// ``shared`` exists, it is kept for the coordinator the facade creates (over
  /// `UserDefaults.standard`, or the suite given to ``setUserDefaultsSuite(to:suiteName:)``);
  /// reading or setting it never creates one.
  public static var debugEnabled: Bool {
    get { flag(\.debugEnabled) }
    set { setFlag(\.debugEnabled, to: newValue) }
  }

  /// Whether the store's `synchronize()` runs once after each batch that wrote to it (on
  /// by default); see ``SyncConfiguration/synchronizeOnChange``. Kept like
  /// ``debugEnabled`` when set before ``shared`` exists.
  public static var syncUbiquitousKeyValueStoreOnChange: Bool {
    get { flag(\.synchronizeOnChange) }
    set { setFlag(\.synchronizeOnChange, to: newValue) }
  }

  /// A flag of the shared coordinator's configuration; before it exists, of the one it
  /// will be created with.
  private static func flag(_ path: KeyPath<SyncConfiguration, Bool>) -> Bool {
    if let coordinator = sharedCoordinator.withLock({ $0 }) { return coordinator.configuration[keyPath: path] }
    return pendingConfiguration.withLock { $0[keyPath: path] }
  }

  /// Sets a flag of the shared coordinator's configuration, if it exists, and of the one
  /// the facade creates a coordinator with.
  private static func setFlag(_ path: WritableKeyPath<SyncConfiguration, Bool>, to value: Bool) {
    pendingConfiguration.withLock { $0[keyPath: path] = value }
    sharedCoordinator.withLock { $0 }?.configuration[keyPath: path] = value
  }

  /// What the shared coordinator did and why; see ``SyncStatus``.
  public static var status: SyncStatus {
    shared.status
  }

  /// What the shared coordinator did over the last seven days; see ``SyncMetrics`` and
  /// ``SyncCoordinator/metrics``.
  ///
  /// ```swift
  /// telemetry.record(Zephyr.metrics)   // once a day
  /// ```
  public static var metrics: SyncMetrics {
    shared.metrics
  }

  /// Whether the store's initial download has happened on this device; see
  /// ``InitialDownload`` and ``SyncStatus/initialDownload``.
  public static var initialDownload: InitialDownload {
    shared.status.initialDownload
  }

  /// Waits until the store's initial download has happened, or `timeout` has passed, and
  /// returns where it stands; see ``SyncCoordinator/waitForInitialDownload(timeout:)``.
  ///
  /// ```swift
  /// if await Zephyr.waitForInitialDownload(timeout: .seconds(10)) != .pending { … }
  /// ```
  public static func waitForInitialDownload(timeout: Duration) async -> InitialDownload {
    await shared.waitForInitialDownload(timeout: timeout)
  }
}

import Foundation
import Zephyr

/// A deterministic, in-process model of the iCloud key-value store, for tests.
///
/// Each device has a local cache; writes are cached at once and reach the server only
/// when the test says so. The server is last-writer-wins per key, like iCloud's. Nothing
/// happens on a timer: the test drives every upload and download, so no test sleeps.
///
/// ```swift
/// let cloud = SimulatedCloud()
/// let a = SyncCoordinator(defaults: suiteA, suiteName: "A", store: cloud.device("A"))
/// let b = SyncCoordinator(defaults: suiteB, suiteName: "B", store: cloud.device("B"))
/// suiteA.set("dusk", forKey: "theme")
/// a.sync()          // writes the record into A's cache
/// cloud.deliver()   // A's writes reach the server; B downloads them and is notified
/// b.sync()
/// suiteB.string(forKey: "theme")   // "dusk"
/// ```
///
/// The `StoreLimits` passed to ``init(limits:)`` are enforced as Apple does: a write over
/// the quota changes nothing and posts `ExternalChange.Reason.quotaViolation` to the
/// writing device's observers; a key over the key-length limit is refused (where Apple
/// would raise an exception) and counted in
/// ``SimulatedDevice/Statistics-swift.struct/keyLengthExceptions``.
///
/// Delivery is synchronous: when ``download(to:notify:)`` or ``deliver()`` returns, every
/// observer of the device has been called and has returned. Where it is called depends on
/// ``Delivery``: by default, as on Apple platforms, on the cloud's own delivery thread,
/// never the caller's, and a quota violation arrives there some time after the write that
/// caused it (``waitForDeliveries()`` waits for it). ``duringNextWrite(to:_:)`` makes an
/// event arrive while a device is being written to.
public final class SimulatedCloud: Sendable {
  /// Which thread a device's observers are called on.
  public enum Delivery: Sendable, Hashable {
    /// The cloud's own delivery thread, as `NSUbiquitousKeyValueStore` posts its
    /// notifications on a thread of its choosing (the default). ``download(to:notify:)``,
    /// ``post(_:to:)`` and ``switchAccount(of:to:)`` wait until the observers returned;
    /// a quota violation is delivered after the write that caused it, without waiting.
    case storeThread
    /// The thread that calls ``download(to:notify:)``, ``post(_:to:)`` or
    /// ``switchAccount(of:to:)``, and a quota violation on the writing thread, from inside
    /// the write: the simplest world, with no second thread.
    case callingThread
  }
  /// The account every device starts in.
  public static let defaultAccount = "default"

  /// The limits every device enforces.
  public let limits: StoreLimits
  /// Which thread observers are called on.
  public var delivery: Delivery { deliverer.mode }
  let state: Locked<CloudState>
  let deliverer: Deliverer
  private let devices = Locked<[String: SimulatedDevice]>([:])

  /// Creates an empty cloud with one default account, whose devices enforce `limits`
  /// (`StoreLimits.iCloud` by default) and whose observers are called as `delivery` says.
  public init(limits: StoreLimits = .iCloud, delivery: Delivery = .storeThread) {
    self.limits = limits
    state = Locked(CloudState())
    deliverer = Deliverer(mode: delivery)
  }

  /// Waits until every event queued for delivery (a quota violation, an event started by
  /// ``duringNextWrite(to:_:)``) has been delivered and its observers returned. Returns at
  /// once with ``Delivery/callingThread`` or on the delivery thread itself.
  public func waitForDeliveries() {
    deliverer.waitUntilIdle()
  }

  /// Runs `action` once, right after the next write the device `name` accepts: on the
  /// delivery thread, while the writer goes on (``Delivery/storeThread``), or on the
  /// writing thread from inside the write (``Delivery/callingThread``). Models an event
  /// that arrives while an engine is writing:
  ///
  /// ```swift
  /// cloud.duringNextWrite(to: "A") { cloud.download(to: "A") }
  /// coordinatorA.sync()
  /// cloud.waitForDeliveries()
  /// ```
  public func duringNextWrite(to name: String, _ action: @escaping @Sendable () -> Void) {
    _ = device(name)
    state.withLock { $0.devices[name]?.duringNextWrite.append(action) }
  }

  /// The device called `name`, created on first use in the default account. The same
  /// name always returns the same device.
  ///
  /// A new device has not had its initial download yet, as a new install on Apple
  /// platforms: until its first ``download(to:notify:)`` it keeps no write (writes land in
  /// its cache, readable there, but never reach the server), and that download replaces
  /// its cache with the server's values and reports ``ExternalChange/Reason/initialSync``
  /// (Apple: "Your attempt to write to key-value storage was discarded because an initial
  /// download from iCloud has not yet happened"). Pass `initiallyDownloaded: true` for a
  /// device whose initial download happened before the test starts.
  public func device(_ name: String, initiallyDownloaded: Bool = false) -> SimulatedDevice {
    devices.withLock { devices in
      if let device = devices[name] { return device }
      let device = SimulatedDevice(name: name, cloud: state, limits: limits, deliverer: deliverer)
      state.withLock {
        var fresh = DeviceState(account: Self.defaultAccount)
        fresh.awaitingInitialDownload = !initiallyDownloaded
        if initiallyDownloaded { fresh.replaceCache(with: $0.servers[Self.defaultAccount] ?? [:]) }
        $0.devices[name] = fresh
      }
      devices[name] = device
      return device
    }
  }

  /// The names of the devices created so far, sorted.
  public var deviceNames: [String] {
    state.withLock { $0.devices.keys.sorted() }
  }

  /// The keys `device` wrote that have not reached the server yet, sorted: writes in
  /// flight, which the next ``upload(from:)`` sends, overwriting whatever the server holds.
  public func pendingKeys(of device: String) -> [String] {
    state.withLock { Set(($0.devices[device]?.pending ?? []).map(\.key)).sorted() }
  }

  /// Sends every device's pending writes to its account's server, in the order they
  /// were written across all devices. The server keeps the last write of each key.
  public func upload() {
    state.withLock { $0.upload(from: nil) }
  }

  /// Sends one device's pending writes to its account's server, in write order.
  public func upload(from device: String) {
    _ = self.device(device)
    state.withLock { $0.upload(from: device) }
  }

  /// Copies the server's values into the device's cache, except keys the device wrote
  /// and has not uploaded yet. When `notify` is true, the device's observers receive a
  /// `serverChange` event naming exactly the keys whose cached value
  /// changed (none when nothing changed); `false` models a dropped event.
  public func download(to device: String, notify: Bool = true) {
    _ = self.device(device)
    let (changed, initial, observers) = state.withLock { state in
      let initial = state.devices[device]?.awaitingInitialDownload ?? false
      return (state.download(to: device), initial, state.devices[device]?.orderedObservers ?? [])
    }
    guard notify, !changed.isEmpty || initial else { return }
    deliverer.deliver(ExternalChange(reason: initial ? .initialSync : .serverChange, keys: changed), to: observers)
  }

  /// Downloads to every device, in name order, with notifications.
  public func download() {
    for name in deviceNames { download(to: name) }
  }

  /// ``upload()``, then ``download()``.
  public func deliver() {
    upload()
    download()
  }

  /// Posts any event to a device's observers: duplicates, unknown keys, out-of-order
  /// deliveries, quota violations.
  public func post(_ change: ExternalChange, to device: String) {
    _ = self.device(device)
    let observers = state.withLock { $0.devices[device]?.orderedObservers ?? [] }
    deliverer.deliver(change, to: observers)
  }

  /// Signs a device into another account: its pending writes are dropped, its cache is
  /// replaced by that account's server values (the account's download: a new install's
  /// writes are kept from then on), and its observers receive an `accountChange` event
  /// naming the keys whose value changed.
  public func switchAccount(of device: String, to account: String) {
    let store = self.device(device)
    let (changed, observers) = state.withLock { state in
      (
        state.switchAccount(of: device, to: account, limits: limits),
        state.devices[device]?.orderedObservers ?? []
      )
    }
    _ = store
    deliverer.deliver(ExternalChange(reason: .accountChange, keys: changed), to: observers)
  }

  /// Signs a device out of iCloud, as a person does in Settings (or a device that never
  /// had an account): its ``SimulatedDevice/isSignedIn`` is `false`, `synchronize()`
  /// returns `false`, and nothing moves between it and the server: its writes stay in
  /// its cache, pending, and downloads bring it nothing. Its cache and its observers stay.
  ///
  /// ```swift
  /// cloud.signOut("A")
  /// let a = SyncCoordinator(defaults: suite, suiteName: "A", store: cloud.device("A"))
  /// a.metrics.launchesSignedOut   // 1
  /// ```
  public func signOut(_ device: String) {
    _ = self.device(device)
    state.withLock { $0.devices[device]?.signedOut = true }
  }

  /// Signs a device back into the account it was in: its pending writes upload and
  /// downloads reach it again, with the next ``upload(from:)`` and ``download(to:notify:)``.
  /// (To model signing into another account, use ``switchAccount(of:to:)``.)
  public func signIn(_ device: String) {
    _ = self.device(device)
    state.withLock { $0.devices[device]?.signedOut = false }
  }

  /// The default account's server values.
  public var serverValues: [String: PropertyListValue] {
    serverValues(account: Self.defaultAccount)
  }

  /// An account's server values.
  public func serverValues(account: String) -> [String: PropertyListValue] {
    state.withLock { $0.servers[account] ?? [:] }
  }

  /// Writes straight to the default account's server, as a foreign writer would (an old
  /// app version, another library, garbage). Devices see it on their next download.
  public func setServerValue(_ value: PropertyListValue, forKey key: String) {
    state.withLock { $0.servers[Self.defaultAccount, default: [:]][key] = value }
  }

  /// Removes a key straight from the default account's server.
  public func removeServerValue(forKey key: String) {
    state.withLock { $0.servers[Self.defaultAccount, default: [:]][key] = nil }
  }
}

/// One device's view of a ``SimulatedCloud``: a `KeyValueSyncStore` with a local
/// cache, like `NSUbiquitousKeyValueStore` on one device.
public final class SimulatedDevice: KeyValueSyncStore {
  /// What a device was asked to do, for assertions and benchmarks.
  public struct Statistics: Sendable, Equatable {
    /// Accepted `setValue` and `removeValue` calls.
    public var writes = 0
    /// `synchronize()` calls.
    public var synchronizeCalls = 0
    /// Writes of keys over the length limit, where Apple would raise an exception.
    public var keyLengthExceptions = 0
    /// Writes refused for exceeding the byte or key quota.
    public var quotaViolations = 0
  }

  /// The device's name.
  public let name: String
  /// The limits the device enforces: its cloud's. A coordinator over the device checks
  /// against them unless its configuration sets others.
  public let limits: StoreLimits
  private let cloud: Locked<CloudState>
  private let deliverer: Deliverer

  init(name: String, cloud: Locked<CloudState>, limits: StoreLimits, deliverer: Deliverer) {
    self.name = name
    self.cloud = cloud
    self.limits = limits
    self.deliverer = deliverer
  }

  /// What the device was asked to do so far.
  public var statistics: Statistics {
    cloud.withLock { $0.devices[name]?.statistics ?? Statistics() }
  }

  /// The device's local cache.
  public var cachedValues: [String: PropertyListValue] {
    cloud.withLock { $0.devices[name]?.cache ?? [:] }
  }

  /// The account the device is signed into.
  public var account: String {
    cloud.withLock { $0.devices[name]?.account ?? SimulatedCloud.defaultAccount }
  }

  /// Bytes the device's cache uses, as the store accounts them.
  public var usedBytes: Int {
    cloud.withLock { $0.devices[name]?.totalBytes ?? 0 }
  }

  /// The value in the device's cache, uploaded or not.
  public func value(forKey key: String) -> PropertyListValue? {
    LockAudit.assertNoLockHeld(calling: "the store")
    return cloud.withLock { $0.devices[name]?.cache[key] }
  }

  /// The device's cache; the same as ``cachedValues``.
  public func allValues() -> [String: PropertyListValue] {
    LockAudit.assertNoLockHeld(calling: "the store")
    return cachedValues
  }

  /// Writes to the device's cache at once; the write reaches the server on the next
  /// upload from this device. Refused, and counted, when the key is too long or the value
  /// does not fit the quota (then `quotaViolation` is posted to this device's observers).
  public func setValue(_ value: PropertyListValue, forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "the store")
    write(value, forKey: key)
  }

  /// Removes the key from the device's cache at once; the removal reaches the server on
  /// the next upload from this device.
  public func removeValue(forKey key: String) {
    LockAudit.assertNoLockHeld(calling: "the store")
    write(nil, forKey: key)
  }

  /// Counts the call and returns `true`, or `false` while the device is signed out (as
  /// Apple's does with no iCloud account). Like Apple's, it touches the local cache only:
  /// the test decides when writes are uploaded.
  @discardableResult
  public func synchronize() -> Bool {
    LockAudit.assertNoLockHeld(calling: "the store")
    return cloud.withLock { state in
      state.devices[name]?.statistics.synchronizeCalls += 1
      return !(state.devices[name]?.signedOut ?? false)
    }
  }

  /// `false` while the device is signed out (``SimulatedCloud/signOut(_:)``), else
  /// `true`.
  public var isSignedIn: Bool? {
    cloud.withLock { !($0.devices[name]?.signedOut ?? false) }
  }

  /// Calls `handler` for every event that ``SimulatedCloud`` delivers or posts to this
  /// device, on the thread ``SimulatedCloud/Delivery`` says, until the token is cancelled
  /// or released.
  public func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
    let name = self.name
    let id = cloud.withLock { state -> Int in
      let id = state.devices[name]?.nextObserver ?? 0
      state.devices[name]?.nextObserver += 1
      state.devices[name]?.observers[id] = handler
      return id
    }
    return ObservationToken { [cloud] in
      cloud.withLock { _ = $0.devices[name]?.observers.removeValue(forKey: id) }
    }
  }

  private func write(_ value: PropertyListValue?, forKey key: String) {
    let size = value.map { key.utf8.count + SimulatedCloud.binaryPlistSize(of: $0) } ?? 0
    typealias Observer = @Sendable (ExternalChange) -> Void
    let (violation, interleaved): ((ExternalChange, [Observer])?, [@Sendable () -> Void]) = cloud.withLock { state in
      let sequence = state.nextSequence
      var written = false
      let violation = state.withDevice(name) { device -> (ExternalChange, [@Sendable (ExternalChange) -> Void])? in
        guard key.utf8.count <= limits.maximumKeyBytes else {
          device.statistics.keyLengthExceptions += 1
          return nil
        }
        let total = device.totalBytes - (device.sizes[key] ?? 0) + size
        let count = device.cache.count + (device.cache[key] == nil && value != nil ? 1 : 0)
        if value != nil, total > limits.maximumTotalBytes || count > limits.maximumKeyCount {
          device.statistics.quotaViolations += 1
          return (ExternalChange(reason: .quotaViolation, keys: [key]), device.orderedObservers)
        }
        device.store(value, forKey: key, size: size)
        if !device.awaitingInitialDownload {
          device.pending.append(PendingWrite(sequence: sequence, key: key, value: value))
        }
        device.statistics.writes += 1
        written = true
        return nil
      }
      var interleaved: [@Sendable () -> Void] = []
      if written {
        state.nextSequence += 1
        interleaved = state.devices[name]?.duringNextWrite ?? []
        state.devices[name]?.duringNextWrite = []
      }
      return (violation ?? nil, interleaved)
    }
    if let (change, observers) = violation {
      deliverer.deliverLater { for observer in observers { observer(change) } }
    }
    for action in interleaved { deliverer.deliverLater(action) }
  }
}

extension SimulatedCloud {
  /// The size of `value` as a binary property list, as Apple accounts it.
  public static func binaryPlistSize(of value: PropertyListValue) -> Int {
    (try? PropertyListSerialization.data(fromPropertyList: value.foundationValue, format: .binary, options: 0))?
      .count ?? 0
  }
}

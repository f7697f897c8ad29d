import Foundation
import Zephyr

/// A deterministic, in-process model of CloudKit's private database behind
/// `CKSyncEngine`, for tests: each device is a `KeyValueSyncStore` over the same core as
/// `CloudKitStore`, and the test drives every send and fetch.
///
/// It keeps ``SimulatedCloud``'s driving calls, so a test switches world by switching
/// type, and it enforces CloudKit's rules:
/// - change tags: a save over a version the device has not seen fails with
///   `serverRecordChanged`, carrying the server's record; the first save to arrive wins;
/// - the zone: saves into a missing zone fail with `zoneNotFound`; a deleted zone is seen
///   by every device's next fetch, with its reason (``ZoneDeletion``);
/// - 1 MB a record, at most 400 changes a request, and a quota (``quotaBytes``);
/// - all-or-nothing batches when ``atomicBatches`` is set;
/// - a device's own saves echo back in its fetches, or not (``echoesOwnSaves``);
/// - events in order, each handled (and the device's state saved) before the next;
/// - nothing is sent before a device's first fetch in an account.
///
/// ```swift
/// let cloudKit = SimulatedCloudKit()
/// let a = SyncCoordinator(defaults: suiteA, suiteName: "A", store: cloudKit.device("A"))
/// cloudKit.failNextSend(of: "A", with: .quotaExceeded)
/// a.sync(); cloudKit.upload()        // refused: A posts quotaViolation and keeps the change
/// cloudKit.advanceClock(by: 120); cloudKit.upload()   // sent after the backoff
/// ```
public final class SimulatedCloudKit: Sendable {
  /// A failure the next send of a device meets.
  public enum Fault: Sendable, Hashable {
    /// The account's storage is full: every save of the batch fails.
    case quotaExceeded
    /// The zone was deleted (by another app version) just before: the batch fails.
    case zoneNotFound
    /// Another writer saved the batch's first record just before (same value, new tag).
    case serverRecordChanged
    /// The server lost the batch's first record.
    case unknownItem
    /// The server rejects the whole batch (`batchRequestFailed` for every change).
    case batchRequestFailed
    /// No network: nothing is sent; the engine keeps its pending changes.
    case networkFailure
  }

  /// Where a crash hits.
  public enum CrashPoint: Sendable, Hashable {
    /// The device handles its next event, and the process is killed before the state is
    /// saved: the device starts again from its last saved state.
    case stateSaved
  }

  /// Why the Zephyr zone disappears from an account.
  public enum ZoneDeletion: Sendable, Hashable {
    /// Deleted by an app (another version, a tool).
    case deleted
    /// The user deleted the app's data in Settings.
    case purged
    /// The user reset their encrypted data.
    case encryptedDataReset
  }

  /// The account every device starts in.
  public static let defaultAccount = SimulatedCloud.defaultAccount

  /// Where the devices keep their state files.
  public let directory: URL
  let deliverer: Deliverer
  let world: Locked<CloudKitWorld>
  private let devices = Locked<[String: SimulatedCloudKitDevice]>([:])
  private let ownsDirectory: Bool

  /// Creates an empty private database in one default account. Devices keep their state
  /// in `directory` (a fresh temporary folder, removed with the cloud, by default); their
  /// observers are called as `delivery` says.
  public init(directory: URL? = nil, delivery: SimulatedCloud.Delivery = .storeThread) {
    ownsDirectory = directory == nil
    self.directory =
      directory
      ?? FileManager.default.temporaryDirectory.appendingPathComponent(
        "zephyr-cloudkit-\(UUID().uuidString.prefix(8))", isDirectory: true)
    deliverer = Deliverer(mode: delivery)
    world = Locked(CloudKitWorld())
  }

  deinit {
    if ownsDirectory { try? FileManager.default.removeItem(at: directory) }
  }

  /// Which thread observers are called on.
  public var delivery: SimulatedCloud.Delivery { deliverer.mode }

  /// Waits until every event queued for delivery has been delivered.
  public func waitForDeliveries() { deliverer.waitUntilIdle() }

  /// The device called `name`, created on first use in the default account; the same name
  /// returns the same device. A new device has not fetched yet (a new install): it sends
  /// nothing until its first ``download(to:notify:)``, which reports `initialSync`. Pass
  /// `initiallyDownloaded: true` for a device whose first fetch happened before the test.
  public func device(_ name: String, initiallyDownloaded: Bool = false) -> SimulatedCloudKitDevice {
    let (device, created) = devices.withLock { devices in
      if let device = devices[name] { return (device, false) }
      let device = SimulatedCloudKitDevice(
        name: name, stateFile: directory.appendingPathComponent("\(name).state"), clock: clock)
      devices[name] = device
      return (device, true)
    }
    if created {
      world.withLock { $0.accounts[name] = Self.defaultAccount }
      if initiallyDownloaded { fetch(device) }
    }
    return device
  }

  /// The names of the devices created so far, sorted.
  public var deviceNames: [String] { devices.withLock { $0.keys.sorted() } }

  /// The keys `device` changed that the server has not accepted yet, sorted.
  public func pendingKeys(of device: String) -> [String] { self.device(device).pendingKeys }

  // MARK: Driving

  /// Every device sends its pending changes, in name order.
  public func upload() {
    for name in deviceNames { upload(from: name) }
  }

  /// The device sends its pending changes: the zone first when it is to be created, then
  /// batches of at most 400 changes, each change once; changes that fail stay queued for
  /// the next upload (after the quota backoff, for a quota error).
  public func upload(from device: String) {
    let store = self.device(device)
    deliverer.perform { send(store) }
  }

  /// The device fetches what changed since its last fetch and reports it to its
  /// observers (`notify: false` drops the notifications; the values still change).
  public func download(to device: String, notify: Bool = true) {
    let store = self.device(device)
    store.muted.withLock { $0 = !notify }
    deliverer.perform { fetch(store) }
    store.muted.withLock { $0 = false }
  }

  /// Every device fetches, in name order.
  public func download() {
    for name in deviceNames { download(to: name) }
  }

  /// ``upload()``, then ``download()``.
  public func deliver() {
    upload()
    download()
  }

  /// Posts any event to a device's observers.
  public func post(_ change: ExternalChange, to device: String) {
    let store = self.device(device)
    deliverer.perform { store.post(change) }
  }

  /// The device signs into `account` (from another one, or from none): its store forgets
  /// the old account's records and queue, fetches the new account's, and reports
  /// `accountChange`.
  public func switchAccount(of device: String, to account: String) {
    let store = self.device(device)
    let previous = world.withLock { world in
      defer { world.accounts[device] = account }
      return world.accounts[device] ?? nil
    }
    store.engine.reset()
    deliverer.perform {
      guard deliver(.accountChange(previous == nil ? .signIn : .switchAccounts), to: store) else { return }
      fetch(store)
    }
  }

  /// The device signs out: its store forgets the account's records and queue and reports
  /// `accountChange`; nothing is sent or fetched until it signs in.
  public func signOut(of device: String) {
    let store = self.device(device)
    world.withLock { $0.accounts[device] = String?.none }
    store.engine.reset()
    deliverer.perform { _ = deliver(.accountChange(.signOut), to: store) }
  }

  /// The next send of `device` meets `fault`.
  public func failNextSend(of device: String, with fault: Fault) {
    _ = self.device(device)
    world.withLock { $0.faults[device, default: []].append(fault) }
  }

  /// The device's process is killed at `point` of its next event, or of the event after
  /// `eventsToSkip` more: a test walks a crash through every gap between two events.
  public func crash(_ device: String, before point: CrashPoint, eventsToSkip: Int = 0) {
    _ = self.device(device)
    world.withLock { $0.crashes[device] = max(0, eventsToSkip) }
  }

  /// The Zephyr zone disappears from `account`, with every record in it; each device's
  /// next fetch reports why.
  public func deleteZone(_ reason: ZoneDeletion, account: String = SimulatedCloudKit.defaultAccount) {
    let mirrored: ZoneDeletionReason =
      switch reason {
      case .deleted: .deleted
      case .purged: .purged
      case .encryptedDataReset: .encryptedDataReset
      }
    world.withLock { $0.servers[account, default: CloudKitServer()].deleteZone(reason: mirrored) }
  }

  // MARK: The server and the rules

  /// The account's storage, in bytes of key names and payloads; `nil` (the default): no
  /// limit. Saves that would pass it fail with `quotaExceeded`.
  public var quotaBytes: Int? {
    get { world.withLock { $0.quotaBytes } }
    set { world.withLock { $0.quotaBytes = newValue } }
  }

  /// Whether a device's fetches return its own saves too (`true` by default).
  public var echoesOwnSaves: Bool {
    get { world.withLock { $0.echoesOwnSaves } }
    set { world.withLock { $0.echoesOwnSaves = newValue } }
  }

  /// Whether the server applies each batch entirely or not at all: one failed change
  /// fails the others with `batchRequestFailed` (`false` by default, as `CKSyncEngine`).
  public var atomicBatches: Bool {
    get { world.withLock { $0.atomicBatches } }
    set { world.withLock { $0.atomicBatches = newValue } }
  }

  /// The time the devices' stores read (for quota backoffs); starts at the real time.
  public var now: Date { world.withLock { $0.now } }

  /// Moves the time forward.
  public func advanceClock(by interval: TimeInterval) {
    world.withLock { $0.now.addTimeInterval(interval) }
  }

  var clock: @Sendable () -> Date {
    { [world] in world.withLock { $0.now } }
  }

  /// The default account's values, decoded from its records.
  public var serverValues: [String: PropertyListValue] { serverValues(account: Self.defaultAccount) }

  /// An account's values, decoded from its records.
  public func serverValues(account: String) -> [String: PropertyListValue] {
    let records = world.withLock { $0.servers[account]?.records.values.map(\.record) ?? [] }
    var values: [String: PropertyListValue] = [:]
    for record in records { values[record.key] = CloudKitPayload.decode(record.payload) }
    return values
  }

  /// Saves a record straight into the default account, as a foreign writer would.
  public func setServerValue(_ value: PropertyListValue, forKey key: String) {
    let record = MirrorRecord(
      recordName: CloudKitRecordName.name(for: key), key: key, payload: CloudKitPayload.encode(value), changeTag: nil)
    world.withLock { world in
      world.servers[Self.defaultAccount, default: CloudKitServer()].zoneExists = true
      _ = world.servers[Self.defaultAccount, default: CloudKitServer()].store(record, writer: nil)
    }
  }

  /// Deletes a key's record straight from the default account.
  public func removeServerValue(forKey key: String) {
    world.withLock {
      $0.servers[Self.defaultAccount, default: CloudKitServer()].delete(CloudKitRecordName.name(for: key))
    }
  }
}

/// Everything `SimulatedCloudKit` holds behind its lock.
struct CloudKitWorld {
  var servers: [String: CloudKitServer] = [SimulatedCloudKit.defaultAccount: CloudKitServer()]
  /// Each device's account; `nil`: signed out.
  var accounts: [String: String?] = [:]
  var faults: [String: [SimulatedCloudKit.Fault]] = [:]
  /// Per device with a crash due: how many events pass before it.
  var crashes: [String: Int] = [:]
  var quotaBytes: Int?
  var echoesOwnSaves = true
  var atomicBatches = false
  var now = Date()
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 34: a store delivers a change, and waits for its observers, while Zephyr is
/// inside one of its calls (`NotificationCenter` makes the posting thread wait, and
/// `NSUbiquitousKeyValueStore` posts whenever its cache changes). Every call an
/// operation makes to the store, to `UserDefaults` and to user code is a call-out: the
/// change is queued for the running operation, never waited for, and applied once.
/// Before the fix, a change delivered inside a store read hung both threads for good.
struct StoreCallOutTests {
  /// What device A is doing when the change arrives.
  enum Operation: String, Sendable, CaseIterable, CustomStringConvertible {
    /// `sync()` with a local edit to push and Zephyr 4's stamp to remove.
    case sync
    /// A typed set, then its push.
    case typedWrite
    /// An element edit (`insert`), then its push.
    case elementEdit
    /// An inbound change from B, applied by A.
    case inbound

    var description: String { rawValue }

    /// The store methods the operation calls, in this setup.
    var storeCalls: [InterleavingStore.Method] {
      switch self {
      case .sync: InterleavingStore.Method.allCases
      case .typedWrite, .elementEdit: [.value, .setValue, .synchronize]
      case .inbound: [.value]
      }
    }
  }

  static let deliveries: [SimulatedCloud.Delivery] = [.storeThread, .callingThread]
  static let storeCases: [(SimulatedCloud.Delivery, Operation, InterleavingStore.Method)] = deliveries.flatMap {
    delivery in Operation.allCases.flatMap { operation in operation.storeCalls.map { (delivery, operation, $0) } }
  }

  @Test(arguments: storeCases)
  func aChangeDeliveredInsideAStoreCallIsAppliedOnce(
    delivery: SimulatedCloud.Delivery, operation: Operation, method: InterleavingStore.Method
  ) throws {
    let world = CallOutWorld(delivery: delivery)
    world.prepare(for: operation)
    world.storeA.duringNext(method) { [cloud = world.cloud] in
      cloud.upload(from: "B")
      cloud.download(to: "A")
    }
    try #require(world.finishes { world.run(operation) }, "\(operation) hung inside \(method)")
    #expect(world.storeA.actionsRun(during: method) == 1, "\(world.logs)")
    world.expectDelivered(after: operation)
  }

  /// (A typed set reads nothing: it knows its key and value.)
  @Test(arguments: deliveries, [Operation.sync, .elementEdit, .inbound])
  func aChangeDeliveredInsideAUserDefaultsReadIsAppliedOnce(
    delivery: SimulatedCloud.Delivery, operation: Operation
  ) throws {
    let world = CallOutWorld(delivery: delivery)
    world.prepare(for: operation)
    let fired = Locked(0)
    world.defaultsA.duringNextRead { [cloud = world.cloud] in
      fired.withLock { $0 += 1 }
      cloud.upload(from: "B")
      cloud.download(to: "A")
    }
    try #require(world.finishes { world.run(operation) }, "\(operation) hung inside a UserDefaults read")
    #expect(fired.withLock { $0 } == 1)
    world.expectDelivered(after: operation)
  }

  /// The issue's own scenario: a `sync()` reading `allValues()` while the store delivers.
  @Test func aSyncReadingTheStoreWhileItDeliversFinishes() throws {
    let world = CallOutWorld(delivery: .storeThread)
    world.prepare(for: .sync)
    world.storeA.duringNext(.allValues) { [cloud = world.cloud] in cloud.deliver() }
    try #require(world.finishes { world.a.sync() })
    world.expectDelivered(after: .sync)
  }
}

/// Two devices on one cloud. A's store is an ``InterleavingStore`` and its suite an
/// ``AppleFaithfulDefaults``; B holds a change of `font` not uploaded yet, which the
/// armed action uploads and downloads to A.
final class CallOutWorld: Sendable {
  static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)
  static let theme = SyncKey<String>("theme", default: "light")
  static let font = SyncKey<String>("font", default: "system")

  let cloud: SimulatedCloud
  let storeA: InterleavingStore
  // UserDefaults is thread-safe (Apple documents it so), though not declared `Sendable`.
  nonisolated(unsafe) let defaultsA: AppleFaithfulDefaults
  let a: SyncCoordinator
  let b: SyncCoordinator
  nonisolated(unsafe) let defaultsB: UserDefaults
  private let suiteA: String
  private let suiteB: String
  private let ledgers: URL
  private let logsA = Locked<[String]>([])
  /// Names this test to the ``Watchdog`` while the world lives.
  private let watched = Watchdog.watch()
  var logs: [String] { logsA.withLock { $0 } }

  init(delivery: SimulatedCloud.Delivery) {
    let prefix = "zephyr-tests.callout.\(UUID().uuidString.prefix(8))"
    suiteA = "\(prefix).A"
    suiteB = "\(prefix).B"
    ledgers = FileManager.default.temporaryDirectory.appendingPathComponent(prefix, isDirectory: true)
    cloud = SimulatedCloud(delivery: delivery)
    storeA = InterleavingStore(cloud.device("A", initiallyDownloaded: true))
    guard let defaultsA = AppleFaithfulDefaults(suiteName: suiteA),
      let defaultsB = AppleFaithfulDefaults(suiteName: suiteB)
    else { preconditionFailure("cannot open the suites") }
    self.defaultsA = defaultsA
    self.defaultsB = defaultsB
    let logs = logsA
    var configurationA = SyncConfiguration(
      deviceID: "A", debugEnabled: true, logHandler: { message in logs.withLock { $0.append(message.text) } },
      ledgerDirectory: ledgers.appendingPathComponent("A"))
    configurationA.synchronizeInterval = 0
    a = SyncCoordinator(defaults: defaultsA, suiteName: suiteA, store: storeA, configuration: configurationA)
    b = SyncCoordinator(
      defaults: defaultsB, suiteName: suiteB, store: cloud.device("B", initiallyDownloaded: true),
      configuration: SyncConfiguration(deviceID: "B", ledgerDirectory: ledgers.appendingPathComponent("B")))
    for coordinator in [a, b] { coordinator.addKeysToBeMonitored(keys: ["theme", "font", "favorites"]) }
  }

  deinit {
    cloud.waitForDeliveries()
    defaultsA.removePersistentDomain(forName: suiteA)
    defaultsB.removePersistentDomain(forName: suiteB)
    try? FileManager.default.removeItem(at: ledgers)
  }

  /// A and B agree on `theme`, `font` and `favorites`; B then changes `font` (and, for an
  /// inbound change, `theme` first, uploaded); A gets what `operation` needs.
  func prepare(for operation: CallOutWorld.Operation) {
    a[Self.theme] = "base"
    a[Self.favorites] = ["a"]
    a[Self.font] = "sans"
    a.waitForPendingLocalEdits()
    cloud.deliver()
    b.sync()
    cloud.deliver()
    a.sync()
    if operation == .inbound {
      b[Self.theme] = "noon"
      b.waitForPendingLocalEdits()
      cloud.upload(from: "B")
    }
    b[Self.font] = "serif"
    b.waitForPendingLocalEdits()
    if operation == .sync {
      // An edit A's coordinator was not told of, and Zephyr 4's stamp: the sync pushes
      // one and removes the other.
      if let plain = UserDefaults(suiteName: suiteA) { plain.set("dusk", forKey: "theme") }
      storeA.base.setValue(.string("stamp"), forKey: KeyPolicy.legacySyncKey)
    }
    a.waitForPendingLocalEdits()
    cloud.waitForDeliveries()
    logsA.withLock { $0 = [] }
  }

  typealias Operation = StoreCallOutTests.Operation

  func run(_ operation: Operation) {
    switch operation {
    case .sync: a.sync()
    case .typedWrite: a[Self.theme] = "dusk"
    case .elementEdit: a.insert("b", into: Self.favorites)
    case .inbound: cloud.download(to: "A")
    }
    a.waitForPendingLocalEdits()
    cloud.waitForDeliveries()
  }

  /// Runs `body` on a thread of its own; `false` when it has not returned after 30
  /// seconds (a deadlock: the world is then leaked, its threads stuck for good).
  func finishes(_ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread {
      body()
      done.signal()
    }.start()
    guard done.wait(timeout: .now() + 30) == .success else {
      Self.leaked.withLock { $0.append(self) }
      return false
    }
    return true
  }

  private static let leaked = Locked<[CallOutWorld]>([])

  /// B's `font` reached A once, and A's own operation did its work.
  func expectDelivered(after operation: Operation, sourceLocation: SourceLocation = #_sourceLocation) {
    a.waitForPendingLocalEdits()
    cloud.waitForDeliveries()
    #expect(defaultsA.string(forKey: "font") == "serif", sourceLocation: sourceLocation)
    let pulls = logsA.withLock { $0.filter { $0.hasPrefix("pull font") } }
    #expect(pulls.count == 1, "\(pulls)", sourceLocation: sourceLocation)
    switch operation {
    case .sync, .typedWrite:
      #expect(record("theme") == .value(.string("dusk")), sourceLocation: sourceLocation)
    case .elementEdit:
      #expect(a[Self.favorites].sorted() == ["a", "b"], sourceLocation: sourceLocation)
    case .inbound:
      #expect(a[Self.theme] == "noon", sourceLocation: sourceLocation)
    }
    if operation == .sync {
      #expect(storeA.value(forKey: KeyPolicy.legacySyncKey) == nil, sourceLocation: sourceLocation)
    }
  }

  private func record(_ key: String) -> SyncRecord.Content? {
    if case .record(let record) = RemoteState(storeValue: storeA.value(forKey: key)) { return record.content }
    return nil
  }
}

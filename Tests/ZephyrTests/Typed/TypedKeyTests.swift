import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Typed keys on real suites across two devices, in the Apple-faithful world.
struct TypedKeyTests {
  /// Sets `key` on `from`, waits for its push, delivers, and returns what `to` reads.
  private func carry<Value>(
    _ key: SyncKey<Value>, _ value: Value, from: TestDevice, to: TestDevice, in harness: Harness
  )
    -> Value
  {
    from.coordinator[key] = value
    from.settle()
    harness.cloud.deliver()
    let read = to.coordinator[key]
    to.settle()  // a first use reconciles the key in the background: let it end here
    return read
  }

  /// Every kind of value crosses from A to B, and B reads it back through plain
  /// `UserDefaults` accessors, as code that knows nothing of Zephyr (or `@AppStorage`) would.
  @Test func everyValueKindReachesTheOtherDeviceAndReadsBackThroughPlainUserDefaults() throws {
    let harness = Harness()
    let names = [
      Keys.theme.name, Keys.flag.name, Keys.count.name, Keys.size.name, Keys.opened.name, Keys.blob.name,
      Keys.tags.name, Keys.scores.name, Keys.nickname.name, Keys.layout.name, Keys.mode.name, Keys.density.name,
      Keys.temperature.name,
    ]
    let a = harness.device("A")
    let b = harness.device("B", monitored: names)
    let plain = b.defaults
    let opened = Date(timeIntervalSince1970: 1_700_000_000)
    let layout = Layout(columns: 3, title: "Home", pinned: ["inbox", "sent"], updated: opened)

    #expect(carry(Keys.flag, true, from: a, to: b, in: harness) == true)
    #expect(plain.bool(forKey: "flag"))
    #expect(carry(Keys.count, 42, from: a, to: b, in: harness) == 42)
    #expect(plain.integer(forKey: "count") == 42)
    #expect(carry(Keys.size, 17.5, from: a, to: b, in: harness) == 17.5)
    #expect(plain.double(forKey: "size") == 17.5)
    #expect(carry(Keys.theme, "dusk", from: a, to: b, in: harness) == "dusk")
    #expect(plain.string(forKey: "theme") == "dusk")
    #expect(carry(Keys.opened, opened, from: a, to: b, in: harness) == opened)
    #expect(plain.object(forKey: "opened") as? Date == opened)
    #expect(carry(Keys.blob, Data([0, 1, 2]), from: a, to: b, in: harness) == Data([0, 1, 2]))
    #expect(plain.data(forKey: "blob") == Data([0, 1, 2]))
    #expect(carry(Keys.tags, ["a", "b"], from: a, to: b, in: harness) == ["a", "b"])
    #expect(plain.stringArray(forKey: "tags") == ["a", "b"])
    #expect(plain.array(forKey: "tags") as? [String] == ["a", "b"])
    #expect(carry(Keys.scores, ["ann": 3, "bo": 5], from: a, to: b, in: harness) == ["ann": 3, "bo": 5])
    #expect(plain.dictionary(forKey: "scores") as? [String: Int] == ["ann": 3, "bo": 5])

    #expect(carry(Keys.nickname, "kit", from: a, to: b, in: harness) == "kit")
    #expect(plain.string(forKey: "nickname") == "kit")
    #expect(carry(Keys.nickname, nil, from: a, to: b, in: harness) == nil)
    #expect(plain.object(forKey: "nickname") == nil, "an optional set to nil removes the key")

    #expect(carry(Keys.layout, layout, from: a, to: b, in: harness) == layout)
    let fields = try #require(plain.dictionary(forKey: "layout"), "a Codable struct is a dictionary")
    #expect(fields["columns"] as? Int == 3)
    #expect(fields["title"] as? String == "Home")
    #expect(fields["pinned"] as? [String] == ["inbox", "sent"])
    #expect(fields["updated"] as? Date == opened)
    #expect(carry(Keys.temperature, Celsius(21.5), from: a, to: b, in: harness) == Celsius(21.5))
    #expect(plain.double(forKey: "temperature") == 21.5, "a Codable encoding a bare value is that value")

    #expect(carry(Keys.mode, .dusk, from: a, to: b, in: harness) == .dusk)
    #expect(plain.string(forKey: "mode") == "dusk")
    #expect(carry(Keys.density, .compact, from: a, to: b, in: harness) == .compact)
    #expect(plain.integer(forKey: "density") == 1, "RawRepresentable and Codable: the raw value")
  }

  /// A typed read returns what `object(forKey:)` returns, as `UserDefaults`' accessors and
  /// `@AppStorage` do: a registered default reads as the value. Syncing never uploads it.
  @Test func readsReturnWhatUserDefaultsReturnsRegisteredDefaultsIncludedElseTheKeysDefault() {
    let harness = Harness()
    let a = harness.device("A")
    // `register(defaults:)` is shared by every suite in the process: a key of this test's own.
    let name = "registered.\(UUID().uuidString.prefix(8))"
    let key = SyncKey<Int>(name, default: 7)
    #expect(a.coordinator[key] == 7)

    a.defaults.register(defaults: [name: 99])
    #expect(a.coordinator[key] == 99, "as integer(forKey:) and @AppStorage read it")
    #expect(a.coordinator[key] == a.defaults.integer(forKey: name))
    a.settle()
    a.coordinator.sync()
    #expect(a.store.value(forKey: name) == nil, "a registered default is never uploaded")

    a.set(.integer(5), name)
    #expect(a.coordinator[key] == 5, "a value written through plain UserDefaults reads typed")
    a.coordinator.removeValue(for: key)
    #expect(a.coordinator[key] == 99, "removed: the registered default shows again")
    a.settle()
    if case .deleted? = a.record(name)?.content {
    } else {
      Issue.record("expected a tombstone: \(a.record(name) as Any)")
    }
  }

  @Test func aStoredValueOfAnotherTypeReadsAsTheDefault() {
    let harness = Harness()
    let a = harness.device("A")
    a.set(.string("seven"), "count")
    a.set(.string("sepia"), "mode")
    a.set(.dictionary(["columns": .string("many")]), "layout")
    #expect(a.coordinator[Keys.count] == 7)
    #expect(a.coordinator[Keys.mode] == .light)
    #expect(a.coordinator[Keys.layout] == Keys.layout.defaultValue)
    #expect(a.value("count") == .string("seven"), "the stored value stays until a write replaces it")
  }

  @Test func settingNilOnAnOptionalKeyDeletesItOnEveryDevice() throws {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: ["nickname"])
    #expect(carry(Keys.nickname, "kit", from: a, to: b, in: harness) == "kit")

    #expect(carry(Keys.nickname, nil, from: a, to: b, in: harness) == nil)
    #expect(b.defaults.object(forKey: "nickname") == nil)
    let record = try #require(a.record("nickname"))
    if case .deleted = record.content {} else { Issue.record("expected a tombstone, got \(record.content)") }
  }

  @Test func removeValueDeletesOnEveryDeviceAndReadsTheDefault() {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: ["theme"])
    #expect(carry(Keys.theme, "dusk", from: a, to: b, in: harness) == "dusk")
    a.coordinator.removeValue(for: Keys.theme)
    #expect(a.coordinator[Keys.theme] == "light")
    a.settle()
    harness.cloud.deliver()
    #expect(b.value("theme") == nil)
    #expect(b.coordinator[Keys.theme] == "light")
  }

  @Test func aTypedKeyIsMonitoredFromItsFirstUseAndCarriesItsMergeStrategy() {
    let harness = Harness()
    let a = harness.device("A")
    let best = SyncKey<Int>("best", default: 0, merge: .max)
    a.coordinator.removeKeysFromBeingMonitored(keys: ["best"])
    _ = a.coordinator[best]
    #expect(a.coordinator.monitoredKeys.contains("best"))
    let strategy = a.coordinator.engine.state.withLock { $0.strategy(of: "best") }
    if case .max = strategy {} else { Issue.record("strategy not set") }
    #expect(a.coordinator.configuration.mergeStrategies["best"] == nil, "kept by the coordinator, not configured")
    _ = a.coordinator[Keys.theme]
    let theme = a.coordinator.engine.state.withLock { $0.strategy(of: "theme") }
    if case .lastWriterWins = theme {} else { Issue.record("no strategy declared, yet \(theme.name)") }
  }

  /// A typed key's strategy and capacity live in the coordinator, not in the app's
  /// configuration: a configuration the app sets after the key's first use (built from
  /// scratch, without them) reads back as set and does not drop them.
  @Test func aConfigurationSetAfterATypedKeysFirstUseKeepsItsStrategyAndCapacity() {
    let harness = Harness()
    let a = harness.device("A")
    let tags = SyncKey<[String]>("tags", default: [], merge: .set(capacity: 2))
    _ = a.coordinator[tags]
    a.settle()
    a.coordinator.configuration = SyncConfiguration(deviceID: "A", ledgerDirectory: a.ledgerDirectory)
    #expect(a.coordinator.configuration.mergeStrategies.isEmpty, "the configuration reads back as the app set it")
    #expect(a.coordinator.configuration.setCapacities.isEmpty, "the configuration reads back as the app set it")
    for tag in ["x", "y", "z"] {
      a.coordinator.insert(tag, into: tags)
      a.settle()
    }
    #expect(Set(a.coordinator[tags]) == ["y", "z"], "merged by .set(capacity: 2): the newest two kept")
    let stored = a.store.value(forKey: "tags")
    guard case .replica = RemoteState(storeValue: stored) else {
      Issue.record("expected a strategy record in the store, got \(String(describing: stored))")
      return
    }
  }

  @Test func aTypedSetMadeDuringAnOperationIsStillPushed() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["count", "theme"])
    let b = harness.device("B", monitored: ["count", "theme"])
    #expect(carry(Keys.count, 1, from: a, to: b, in: harness) == 1)
    let coordinator = b.coordinator
    // While B's inbound event decides its pull of `count`, the app sets two typed keys
    // from inside the operation: one the pull is about, one it is not.
    coordinator.engine.testHooks.withLock { hooks in
      hooks.beforePullWrite = { [weak coordinator] key in
        guard key == "count", let coordinator else { return }
        coordinator[Keys.count] = 100
        coordinator[Keys.theme] = "during"
      }
    }
    a.coordinator[Keys.count] = 2
    a.settle()
    harness.cloud.deliver()
    b.settle()
    harness.cloud.deliver()

    for device in [a, b] {
      #expect(device.coordinator[Keys.count] == 100, "\(device.name): the pull did not overwrite the typed set")
      #expect(device.coordinator[Keys.theme] == "during", "\(device.name): the set was pushed")
    }
  }

  @Test func aTypedSetOnADeviceWithNoHistoryOfTheKeyWinsOverTheCloudsEarlierValue() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B")
    a.coordinator[Keys.theme] = "dusk"
    a.settle()
    harness.cloud.deliver()  // B does not follow theme yet: it has no history of it

    b.coordinator[Keys.theme] = "mine"
    b.settle()
    harness.cloud.deliver()

    #expect(a.coordinator[Keys.theme] == "mine")
    #expect(b.coordinator[Keys.theme] == "mine")
  }

  @Test func aTypedSetMadeBeforeTheInitialDownloadLosesToTheCloud() {
    let harness = Harness()
    let a = harness.device("A")
    a.coordinator[Keys.theme] = "dusk"
    a.settle()
    harness.cloud.upload()
    let b = harness.device("B", initiallyDownloaded: false)
    b.coordinator[Keys.theme] = "first launch"
    b.settle()
    harness.cloud.upload()
    harness.cloud.download(to: "B")  // the initial download

    #expect(b.coordinator[Keys.theme] == "dusk")
    #expect(
      harness.cloud.serverValues["theme"].map { RemoteState(storeValue: $0) } == a.record("theme").map { .record($0) })
  }

  /// The pull writes the key after the typed set: the push reads it again instead of
  /// sending the set's value over the pulled one.
  @Test func anInboundChangeArrivingBeforeThePushWinsUnderLastWriterWins() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["theme"])
    let b = harness.device("B", monitored: ["theme"])
    #expect(carry(Keys.theme, "base", from: a, to: b, in: harness) == "base")
    b.coordinator[Keys.theme] = "from B"
    b.settle()
    harness.cloud.upload()

    a.coordinator.engine.localEditQueue.suspend()  // A's push has not run yet
    a.coordinator[Keys.theme] = "from A"
    harness.cloud.download(to: "A")  // B's change arrives first: a conflict, remote wins
    #expect(a.coordinator[Keys.theme] == "from B")
    a.coordinator.engine.localEditQueue.resume()
    a.settle()
    harness.cloud.deliver()

    #expect(a.coordinator[Keys.theme] == "from B")
    #expect(b.coordinator[Keys.theme] == "from B")
    #expect(a.record("theme")?.content == .value(.string("from B")), "A pushed nothing over the pulled value")
  }
}

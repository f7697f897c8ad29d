import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// The budget follows the limits the store declares (`KeyValueSyncStore.limits`), with no
/// configuration from the app; an explicit ``SyncConfiguration/limits`` still wins.
struct StoreDeclaredLimitsTests {
  /// A coordinator over `store` with the default configuration, in a fresh suite.
  private static func coordinator(
    over store: any KeyValueSyncStore, configure: (inout SyncConfiguration) -> Void = { _ in }
  ) -> (SyncCoordinator, UserDefaults, () -> Void) {
    let name = "zephyr-tests.limits.\(UUID().uuidString.prefix(8))"
    guard let defaults = AppleFaithfulDefaults(suiteName: name) else { preconditionFailure("suite \(name)") }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(name, isDirectory: true)
    var configuration = SyncConfiguration(deviceID: "A", ledgerDirectory: directory)
    configure(&configuration)
    let coordinator = SyncCoordinator(defaults: defaults, suiteName: name, store: store, configuration: configuration)
    return (
      coordinator, defaults,
      {
        defaults.removePersistentDomain(forName: name)
        try? FileManager.default.removeItem(at: directory)
      }
    )
  }

  @Test func aStoreWithoutAKeyCapTakesThe1025thKey() {
    let cloud = SimulatedCloud(limits: .cloudKit)
    let (coordinator, defaults, cleanUp) = Self.coordinator(over: cloud.device("A", initiallyDownloaded: true))
    defer { cleanUp() }
    for index in 0..<1_025 { defaults.set(true, forKey: "k\(index)") }
    coordinator.sync()
    #expect(coordinator.status.refusedKeys.isEmpty)
    #expect(cloud.device("A").cachedValues.count == 1_025)
    #expect(coordinator.configuration.limits == .cloudKit)
  }

  @Test func aStoreWithoutATotalCapTakesMoreThan1MB() {
    let cloud = SimulatedCloud(limits: .cloudKit)
    let (coordinator, defaults, cleanUp) = Self.coordinator(over: cloud.device("A", initiallyDownloaded: true))
    defer { cleanUp() }
    for index in 0..<3 { defaults.set(Data(repeating: UInt8(index), count: 600_000), forKey: "blob\(index)") }
    coordinator.sync()
    #expect(coordinator.status.refusedKeys.isEmpty)
    #expect(cloud.device("A").usedBytes > 1_048_576)
  }

  @Test func theKeyValueStoreStillRefusesThe1025thKeyAndTheSecondMegabyte() {
    let cloud = SimulatedCloud()
    let (coordinator, defaults, cleanUp) = Self.coordinator(over: cloud.device("A", initiallyDownloaded: true))
    defer { cleanUp() }
    for index in 0..<1_025 { defaults.set(true, forKey: "k\(index)") }
    for index in 0..<3 { defaults.set(Data(repeating: UInt8(index), count: 600_000), forKey: "blob\(index)") }
    coordinator.sync()
    let refused = coordinator.status.refusedKeys
    #expect(refused.values.contains(.tooManyKeys(limit: 1_024)))
    #expect(refused.values.contains { if case .overQuota = $0 { true } else { false } })
    #expect(cloud.device("A").statistics.quotaViolations == 0, "refused before the store had to")
  }

  @Test func aRecordOverCloudKitsRecordLimitIsRefusedByName() {
    let cloud = SimulatedCloud(limits: .cloudKit)
    let (coordinator, defaults, cleanUp) = Self.coordinator(over: cloud.device("A", initiallyDownloaded: true))
    defer { cleanUp() }
    defaults.set(Data(repeating: 7, count: 1_100_000), forKey: "huge")
    defaults.set(1, forKey: "small")
    coordinator.sync()
    guard case .overQuota(let needed, let available)? = coordinator.status.refusedKeys["huge"] else {
      Issue.record("huge was not refused: \(coordinator.status.refusedKeys)")
      return
    }
    #expect(needed > StoreLimits.cloudKit.maximumRecordBytes)
    #expect(available == StoreLimits.cloudKit.maximumRecordBytes)
    #expect(cloud.device("A").cachedValues["small"] != nil, "other keys go on")
    #expect(defaults.data(forKey: "huge")?.count == 1_100_000, "the local value is untouched")
  }

  @Test func anExplicitConfigurationStillWins() {
    let cloud = SimulatedCloud(limits: .cloudKit)
    let small = StoreLimits(maximumTotalBytes: 10_000, maximumKeyCount: 3, maximumKeyBytes: 64)
    let (coordinator, defaults, cleanUp) = Self.coordinator(over: cloud.device("A", initiallyDownloaded: true)) {
      $0.limits = small
    }
    defer { cleanUp() }
    for index in 0..<4 { defaults.set(true, forKey: "k\(index)") }
    coordinator.sync()
    #expect(coordinator.status.refusedKeys.count == 1)
    #expect(coordinator.configuration.limits == small)
  }

  @Test func aStoreThatDeclaresNothingGetsTheKeyValueStoresLimits() {
    final class Plain: KeyValueSyncStore {
      func value(forKey key: String) -> PropertyListValue? { nil }
      func allValues() -> [String: PropertyListValue] { [:] }
      func setValue(_ value: PropertyListValue, forKey key: String) {}
      func removeValue(forKey key: String) {}
      func synchronize() -> Bool { true }
      func observeExternalChanges(_ handler: @escaping @Sendable (ExternalChange) -> Void) -> ObservationToken {
        ObservationToken(cancel: {})
      }
    }
    let store = Plain()
    #expect(store.limits == .iCloud)
    let (coordinator, _, cleanUp) = Self.coordinator(over: store)
    defer { cleanUp() }
    #expect(coordinator.configuration.limits == .iCloud)
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Issue 32: the store keeps one upload per key per round, so when k devices edit one
/// strategy key concurrently, values and merge states agree within k + 1 rounds of
/// "deliver; every device syncs; deliver" (DESIGN §4), and after that a round writes
/// nothing, for good. Checked for every strategy, up to 24 devices, with reinstalls.
struct QuietRoundsTests {
  static let strategies: [MergeStrategy] = [.set, .union, .dictionary, .max, .min]

  static func edit(by index: Int, strategy: MergeStrategy) -> PropertyListValue {
    switch strategy {
    case .dictionary: .dictionary(["base": .integer(0), "d\(index)": .integer(Int64(index))])
    case .max, .min: .integer(Int64(index * 7 % 23))
    default: .array([.string("base"), .string("e\(index)")])
    }
  }

  @Test(arguments: strategies, [2, 5, 24])
  func concurrentEditsAgreeWithinKPlusOneRoundsThenWriteNothing(strategy: MergeStrategy, editors: Int) {
    let harness = Harness()
    let names = (0..<editors).map { String(format: "D%02d", $0) }
    let devices = harness.devices(names, merging: "shared", by: strategy)
    devices[0].set(Self.edit(by: 0, strategy: strategy), "shared")
    harness.round()
    harness.round()
    // Every third editor is a reinstall: a new device whose first values arrive with its
    // initial download.
    var editing = devices
    for index in stride(from: 2, to: editors, by: 3) {
      let name = names[index] + "r"
      let fresh = harness.device(name, monitored: ["shared"], initiallyDownloaded: false) { configuration in
        configuration.mergeStrategies["shared"] = strategy
      }
      harness.cloud.download(to: name)
      harness.cloud.waitForDeliveries()
      fresh.coordinator.sync()
      editing[index] = fresh
    }
    harness.cloud.waitForDeliveries()
    for (index, device) in editing.enumerated() { device.set(Self.edit(by: index + 1, strategy: strategy), "shared") }
    for _ in 0..<(editors + 1) { harness.round() }

    let everyone = harness.devices.values.sorted { $0.name < $1.name }
    let values = Set(everyone.map { $0.value("shared")?.fingerprint })
    #expect(values.count == 1, "values differ after \(editors + 1) rounds: \(harness.values(of: "shared"))")
    let states = Set(everyone.map { $0.coordinator.ledgerState(of: "shared") })
    #expect(states.count == 1, "merge states differ after \(editors + 1) rounds")
    #expect(states.first == harness.cloud.serverState(of: "shared"), "the store holds the agreed state")

    let writes = everyone.map { $0.store.statistics.writes }
    for _ in 0..<3 { harness.round() }
    #expect(everyone.map { $0.store.statistics.writes } == writes, "a quiet round writes nothing")
  }
}

extension SyncCoordinator {
  /// The merge state the ledger holds for `key`.
  func ledgerState(of key: String) -> ReplicaState? {
    engine.state.withLock { $0.ledger[key]?.state }
  }
}

extension SimulatedCloud {
  /// The merge state of the server's record of `key`.
  func serverState(of key: String) -> ReplicaState? {
    if case .replica(let record) = RemoteState(storeValue: serverValues[key]) { return record.state }
    return nil
  }
}

import Foundation
import Zephyr
import ZephyrTesting

/// The `workload` section: many random operations on three devices, then convergence.
struct WorkloadReport: Codable, Equatable {
  var keys: Int
  var devices: Int
  var operations: Int
  var operationsPerSecond: Double
  var roundsToConverge: Int
  var converged: Bool

  enum CodingKeys: String, CodingKey {
    case keys, devices, operations, converged
    case operationsPerSecond = "operations_per_second"
    case roundsToConverge = "rounds_to_converge"
  }
}

/// (6) Three devices, random edits, deletes, syncs and deliveries; then rounds until equal.
func workload(keys count: Int, operations: Int) -> WorkloadReport {
  let tag = "workload-\(count)-\(UUID().uuidString.prefix(6))"
  let cloud = SimulatedCloud(limits: limits(for: count))
  let devices = ["A", "B", "C"].map { BenchDevice(name: $0, cloud: cloud, tag: tag) }
  defer { for device in devices { device.tearDown() } }
  let keys = (0..<count).map(key)
  for device in devices { device.coordinator.addKeysToBeMonitored(keys: keys) }
  var generator = SystemRandomNumberGenerator()
  let elapsed = nanoseconds {
    for step in 0..<operations {
      let device = devices[Int.random(in: 0..<3, using: &generator)]
      let index = Int.random(in: 0..<count, using: &generator)
      switch Int.random(in: 0..<10, using: &generator) {
      case 0..<5: device.defaults.set(value(index, version: step).foundationValue, forKey: key(index))
      case 5: device.defaults.removeObject(forKey: key(index))
      case 6, 7: device.coordinator.sync(keys: [key(index)])
      case 8: device.coordinator.sync()
      default: cloud.deliver()
      }
    }
  }
  func converged() -> Bool {
    let domains = devices.map { device in
      (device.defaults.persistentDomain(forName: device.suiteName) ?? [:]).filter { keys.contains($0.key) }
        .compactMapValues(PropertyListValue.init(bridging:))
    }
    return domains.dropFirst().allSatisfy { $0 == domains[0] }
  }
  var rounds = 0
  while !converged(), rounds < 10 {
    cloud.deliver()
    for device in devices { device.coordinator.sync() }
    cloud.deliver()
    rounds += 1
  }
  return WorkloadReport(
    keys: count, devices: 3, operations: operations,
    operationsPerSecond: (Double(operations) / (elapsed / 1e9)).rounded(), roundsToConverge: rounds,
    converged: converged())
}

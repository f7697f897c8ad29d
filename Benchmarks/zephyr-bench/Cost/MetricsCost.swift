import Foundation
import Zephyr
import ZephyrTesting

/// `zephyr-bench metrics`: what keeping ``SyncMetrics`` costs, measured side by side in
/// one run. Three designs, each on its own device and store of `keys` keys: counting off
/// (as before metrics existed), counting on (the default), and counting on with delivery
/// delay measured (each record carries its writer's time). They take turns, run by run,
/// so a noisy machine slows them alike.
struct MetricsRow: Codable {
  var design: String
  var keys: Int
  /// Median of a full `sync()` with nothing to do, in milliseconds.
  var steadySyncMilliseconds: Double
  /// Median of one typed set, pushed, in milliseconds.
  var typedSetMilliseconds: Double
  /// The store bytes of one typed set's record (`setting.0`, a 20-character string).
  var recordBytes: Int
}

enum MetricsBench {
  private struct Design {
    let name: String
    let device: BenchDevice
    let keys: Int
    var steady: [Double] = []
    var typed: [Double] = []

    init(name: String, keys: Int, counting: Bool, measuringDelay: Bool) {
      self.name = name
      self.keys = keys
      let cloud = SimulatedCloud(limits: limits(for: keys))
      device = BenchDevice(name: "A", cloud: cloud, tag: "metrics-\(name.prefix(8))-\(UUID().uuidString.prefix(6))")
      device.coordinator.engine.setCountsMetrics(counting)
      device.coordinator.configuration.measuresDeliveryDelay = measuringDelay
      for index in 0..<keys { device.defaults.set(value(index).foundationValue, forKey: key(index)) }
      device.coordinator.sync()
      device.coordinator.addKeysToBeMonitored(keys: (0..<keys).map(key))
    }

    mutating func turn(_ run: Int) {
      let coordinator = device.coordinator
      steady.append(nanoseconds { coordinator.sync() })
      let index = ((run * 7_919 + 3) % (keys / 5)) * 5
      let typedKey = SyncKey<String>(key(index), default: "")
      _ = coordinator[typedKey]  // its first use (and the reconcile it schedules) is not timed
      coordinator.waitForPendingLocalEdits()
      typed.append(
        nanoseconds {
          coordinator[typedKey] = "typed \(run)"
          coordinator.waitForPendingLocalEdits()
        })
    }

    func row() -> MetricsRow {
      let record = device.store.value(forKey: key(0)).map { key(0).utf8.count + $0.estimatedBinaryPlistSize }
      return MetricsRow(
        design: name, keys: keys, steadySyncMilliseconds: milliseconds(median(steady)),
        typedSetMilliseconds: milliseconds(median(typed)), recordBytes: record ?? 0)
    }
  }

  static func run(keys: Int = 1_000, runs: Int = 101) -> [MetricsRow] {
    // METRICS_BENCH_SAME=1: an A/A run, every design counting off, to see how far the
    // designs' own devices differ.
    let same = ProcessInfo.processInfo.environment["METRICS_BENCH_SAME"] != nil
    var designs = [
      Design(name: "metrics off", keys: keys, counting: false, measuringDelay: false),
      Design(name: same ? "metrics off (2)" : "metrics on", keys: keys, counting: !same, measuringDelay: false),
      Design(
        name: same ? "metrics off (3)" : "metrics on, delivery delay", keys: keys, counting: !same,
        measuringDelay: !same),
    ]
    defer { for design in designs { design.device.tearDown() } }
    for run in 0..<runs {
      // Each turn starts with another design, so none always runs first.
      for offset in 0..<designs.count { designs[(run + offset) % designs.count].turn(run) }
    }
    // setting.0's record, as each design last wrote it.
    for index in designs.indices {
      let coordinator = designs[index].device.coordinator
      coordinator[SyncKey<String>(key(0), default: "")] = "a value of 20 chars."
      coordinator.waitForPendingLocalEdits()
    }
    return designs.map { $0.row() }
  }
}

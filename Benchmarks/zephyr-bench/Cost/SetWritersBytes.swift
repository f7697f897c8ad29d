import Foundation
import Zephyr
import ZephyrTesting

/// `zephyr-bench set-writers`: the store bytes of one `.set` key's record written by 24
/// devices, each adding its own favorite (a 12-character string), in three workloads:
/// one after the other at the end (appends), all at once (concurrent), and one after the
/// other at the front (inserts, which need the state's order field). Each row gives the
/// record's bytes, and the same record without its order field: the encoding before the
/// order field existed, which held the same parts and context.
struct SetWritersRow: Codable {
  var workload: String
  var writers: Int
  var elements: Int
  var recordBytes: Int
  var recordBytesWithoutOrder: Int
  var rounds: Int
}

enum SetWritersBench {
  static let key = SyncKey<[String]>("favorites", default: [], merge: .set)

  static func run(writers: Int = 24) -> [SetWritersRow] {
    ["appends", "concurrent", "inserts"].map { run($0, writers: writers) }
  }

  private static func run(_ workload: String, writers: Int) -> SetWritersRow {
    let cloud = SimulatedCloud()
    let tag = "set-writers-\(workload)-\(UUID().uuidString.prefix(6))"
    let devices = (0..<writers).map { BenchDevice(name: String(format: "W%02d", $0), cloud: cloud, tag: tag) }
    defer { for device in devices { device.tearDown() } }
    func round() {
      cloud.deliver()
      for device in devices { device.coordinator.sync() }
      cloud.deliver()
    }
    func favorite(_ index: Int) -> String { String(format: "favorite-%03d", index) }
    for (index, device) in devices.enumerated() {
      let current = device.coordinator[key]
      switch workload {
      case "inserts": device.coordinator[key] = [favorite(index)] + current
      default: device.coordinator[key] = current + [favorite(index)]
      }
      device.coordinator.waitForPendingLocalEdits()
      if workload != "concurrent" { round() }
    }
    var rounds = 0
    var previous: PropertyListValue?
    repeat {
      previous = cloud.serverValues[key.name]
      round()
      rounds += 1
    } while cloud.serverValues[key.name] != previous && rounds < 3 * writers
    let record = cloud.serverValues[key.name]
    return SetWritersRow(
      workload: workload, writers: writers, elements: devices[0].coordinator[key].count,
      recordBytes: record.map(SimulatedCloud.binaryPlistSize(of:)) ?? 0,
      recordBytesWithoutOrder: record.map { SimulatedCloud.binaryPlistSize(of: withoutOrder($0)) } ?? 0,
      rounds: rounds)
  }

  /// A `.set` record without its order field (the eighth, a list, when present).
  private static func withoutOrder(_ record: PropertyListValue) -> PropertyListValue {
    guard case .array(let fields) = record, fields.count >= 8, case .array = fields[7] else { return record }
    return .array(Array(fields.prefix(7)) + fields.dropFirst(8))
  }
}

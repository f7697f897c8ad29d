import Foundation
import Zephyr
import ZephyrTesting

// zephyr-bench: what Zephyr costs an app, as JSON on standard output.
//
//     swift run -c release zephyr-bench            # 100, 1,000 and 10,000 keys
//     swift run -c release zephyr-bench 1000       # one size
//     swift run -c release zephyr-bench sizes 1000 # one size's own figures only (no peers, no collections)
//     swift run -c release zephyr-bench peers      # the peers' designs only (Peers/)
//     swift run -c release zephyr-bench collections   # collections of ids only (Collections/)
//     swift run -c release zephyr-bench cloudkit      # beyond 1 MB over SimulatedCloudKit (CloudKit/)
//     swift run -c release zephyr-bench metrics   # steady sync and a typed set, metrics off/on
//     swift run -c release zephyr-bench set-writers   # a .set key's record bytes, 24 writers
//
// Every time is a median over repeated runs, and each size measures its own floor in the
// same run, so ratios hold on a noisy machine.

/// The whole report, as printed.
struct BenchReport: Codable {
  var command = "swift run -c release zephyr-bench"
  var cores = ProcessInfo.processInfo.activeProcessorCount
  var os = ProcessInfo.processInfo.operatingSystemVersionString
  var sizes: [SizeReport]
  var workload: WorkloadReport
  var peers: [PeerReport]
  var collections: [CollectionRow]
}

/// What `zephyr-bench collections` prints.
struct CollectionsReport: Codable {
  var collections: [CollectionRow]
}

if PeerComparison.handle(Array(CommandLine.arguments.dropFirst())) { exit(0) }
if CommandLine.arguments.dropFirst().first == "collections-profile" {
  let cloud = SimulatedCloud()
  let capacity = Int(ProcessInfo.processInfo.environment["CAPACITY"] ?? "")
  let starred = ProcessInfo.processInfo.environment["STARRED"] != nil
  let strings = ProcessInfo.processInfo.environment["STRINGS"] != nil
  let design: any CollectionDesign
  if strings {
    design = EngineSetDesign<[String]>(name: "string set", cloud: cloud, tag: "profile", merge: .set)
  } else if starred {
    design = EngineSetDesign<[StarredArticle]>(name: "codable set", cloud: cloud, tag: "profile", compressed: false)
  } else {
    design = EngineSetDesign<PackedSet<UInt32>>(
      name: "packed set", cloud: cloud, tag: "profile", merge: capacity.map { .set(capacity: $0) } ?? .set)
  }
  let count = Int(ProcessInfo.processInfo.environment["COUNT"] ?? "")
  var workload = CollectionWorkload(name: "profile", initialCount: count ?? (starred ? 300 : 25_000))
  workload.capacity = capacity
  if let runs = Int(ProcessInfo.processInfo.environment["INBOUND_RUNS"] ?? "") { workload.inboundRuns = runs }
  if let adds = Int(ProcessInfo.processInfo.environment["OFFLINE_ADDS"] ?? "") { workload.offlineAdds = adds }
  if let size = Int(ProcessInfo.processInfo.environment["BATCH"] ?? "") {
    workload.batchSize = size
    workload.rotating = true
  }
  print(BenchJSON.text(workload.run(design, cloud: cloud)))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "cloudkit" {
  print(BenchJSON.text(CloudKitBench.run()))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "set-writers" {
  print(BenchJSON.text(SetWritersBench.run()))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "metrics" {
  print(BenchJSON.text(MetricsBench.run()))
  exit(0)
}
if CommandLine.arguments.dropFirst().first == "collections" {
  print(BenchJSON.text(CollectionsReport(collections: CollectionsBench.run())))
  exit(0)
}
let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0) }
if CommandLine.arguments.dropFirst().first == "sizes" {
  let counts = sizes.isEmpty ? [100, 1_000, 10_000] : sizes
  print(BenchJSON.text(counts.map { measure(keys: $0, runs: $0 >= 10_000 ? 5 : 21) }))
  exit(0)
}
let report = BenchReport(
  sizes: (sizes.isEmpty ? [100, 1_000, 10_000] : sizes).map { count in
    measure(keys: count, runs: count >= 10_000 ? 5 : 21)
  },
  workload: workload(keys: 100, operations: 3_000),
  peers: PeerComparison.run(),
  collections: CollectionsBench.run())
print(BenchJSON.text(report))

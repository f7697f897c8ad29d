import Foundation
import Zephyr
import ZephyrTesting

/// A seeded workload over one synced collection of ids on three devices: a history
/// uploaded by one device, adds made one at a time while every device is offline,
/// concurrent removals on two devices, then delivery until the devices agree.
struct CollectionWorkload {
  /// The workload's name in the JSON.
  var name: String
  /// How many ids the devices start with.
  var initialCount: Int
  /// The history's ids per edit; with `rotating`, the devices take turns and agree every
  /// ten edits (a history marked over weeks on three devices), else the first device
  /// makes every edit.
  var batchSize = 1_000
  var rotating = false
  /// The capacity the design declares, if any: the history past it is trimmed, oldest
  /// edit first.
  var capacity: Int?
  /// How many ids each device adds, one edit each, while offline.
  var offlineAdds = 20
  /// How many of the first ids each of the first two devices removes, one edit.
  var removals = 25
  /// How many ids the other device marks, as one edit, for each inbound change.
  var inboundBatch = 1
  /// Timed single marks as an app makes them: one id inserted, then pushed on its own
  /// (`waitForPendingLocalEdits()`), on the first device; none skips the phase.
  var singleMarks = 0
  /// Timed repetitions of an inbound change and of a read.
  var inboundRuns = 21
  var readRuns = 101
  var seed: UInt64 = 0x5EED_2026

  /// The figures of one design under this workload, its phases run one after the other.
  func run(_ design: any CollectionDesign, cloud: SimulatedCloud) -> CollectionRow {
    let run = CollectionRun(self, design: design, cloud: cloud)
    CollectionRun.interleave([run])
    return run.row()
  }
}

/// One design's run of a ``CollectionWorkload``, phase by phase, so that the timed
/// phases of the designs compared can take turns (``interleave(_:)``): on a shared,
/// noisy machine, a slow spell then slows every design alike, and their ratios hold.
final class CollectionRun {
  let workload: CollectionWorkload
  let design: any CollectionDesign
  let cloud: SimulatedCloud
  private var random: SplitMix64
  private var drawn = Set<UInt32>()
  private var initial: [UInt32] = []
  private var edit: [UInt32: Int] = [:]
  private var added: [UInt32] = []
  private var firstRounds = 0
  private var writesBefore = 0
  private var insertTimes: [Double] = []
  private var pushTimes: [Double] = []
  private var inboundTimes: [Double] = []
  private var markTimes: [Double] = []
  private var inboundReads = 0
  private var defaultsReadTimes: [Double] = []
  private var readTimes: [Double] = []
  private var settled: (final: Set<UInt32>, writesPerEdit: Double, rounds: Int, recordBytes: Int)?
  private var sameElementsBlobBytes: Int?

  init(_ workload: CollectionWorkload, design: any CollectionDesign, cloud: SimulatedCloud) {
    self.workload = workload
    self.design = design
    self.cloud = cloud
    random = SplitMix64(seed: workload.seed)
  }

  /// The phases of `runs`, the timed ones taking turns: the offline edits device by
  /// device, then each inbound change and `UserDefaults` read.
  static func interleave(_ runs: [CollectionRun]) {
    for run in runs { run.buildHistory() }
    for index in 0..<3 {
      for run in runs { run.markOffline(on: index) }
    }
    for run in runs { run.settleOffline() }
    for _ in 0..<(runs.first?.workload.inboundRuns ?? 0) {
      for run in runs { run.inboundChange() }
    }
    for _ in 0..<(runs.first?.workload.inboundRuns ?? 0) {
      for run in runs { run.defaultsRead() }
    }
    for _ in 0..<(runs.first?.workload.singleMarks ?? 0) {
      for run in runs { run.markSingly() }
    }
    for run in runs { run.probeReads() }
  }

  private func freshIDs(_ count: Int) -> [UInt32] {
    var ids: [UInt32] = []
    while ids.count < count {
      let id = UInt32(truncatingIfNeeded: random.next())
      if drawn.insert(id).inserted { ids.append(id) }
    }
    return ids
  }

  /// The history, in edits of `batchSize` ids, brought to every device.
  private func buildHistory() {
    initial = freshIDs(workload.initialCount)
    for (number, start) in stride(from: 0, to: initial.count, by: workload.batchSize).enumerated() {
      let batch = Array(initial[start..<min(start + workload.batchSize, initial.count)])
      for id in batch { edit[id] = number }
      design.insert(batch, on: workload.rotating ? number % 3 : 0, waiting: true)
      if workload.rotating, number % 10 == 9 { _ = converge() }
    }
    firstRounds = converge()
    writesBefore = design.storeWrites
  }

  /// Offline: device `index` marks ids one at a time (timed), then pushes (timed).
  private func markOffline(on index: Int) {
    for id in freshIDs(workload.offlineAdds) {
      insertTimes.append(nanoseconds { design.insert([id], on: index, waiting: false) })
      added.append(id)
    }
    pushTimes.append(nanoseconds { design.push(on: index) })
  }

  private var removed: [[UInt32]] {
    [
      Array(initial.prefix(workload.removals)),
      Array(initial.dropFirst(workload.removals).prefix(workload.removals)),
    ]
  }

  /// A and B remove different ids; then delivery until the devices agree.
  private func settleOffline() {
    for (index, ids) in removed.enumerated() { design.remove(ids, on: index) }
    let edits = 3 * workload.offlineAdds + removed.count
    let writesPerEdit = Double(design.storeWrites - writesBefore) / Double(edits)
    let rounds = converge()
    settled = (design.ids(on: 0), writesPerEdit, rounds, design.recordBytes(in: cloud))
    sameElementsBlobBytes = design.sameElementsBlobBytes(on: 0)
  }

  /// One inbound change: B marks `inboundBatch` ids (one edit); its record reaches A's
  /// store untimed; A's handling of the change, until A has written its value, is timed.
  private func inboundChange() {
    let ids = freshIDs(workload.inboundBatch)
    guard let id = ids.last else { return }
    design.insert(ids, on: 1, waiting: true)
    cloud.upload(from: "B")
    cloud.download(to: "A", notify: false)
    let readsBefore = design.defaultsReads(on: 0)
    inboundTimes.append(nanoseconds { design.receive(on: 0) })
    inboundReads += design.defaultsReads(on: 0) - readsBefore
    precondition(design.contains(id, on: 0), "\(design.name): the inbound change did not reach A")
  }

  /// One mark as an app makes it: A inserts one id and pushes it at once (timed together).
  private func markSingly() {
    guard let id = freshIDs(1).first else { return }
    markTimes.append(nanoseconds { design.insert([id], on: 0, waiting: true) })
    precondition(design.contains(id, on: 0), "\(design.name): the single mark is not held")
  }

  /// One `UserDefaults` read of the key, as an inbound change may make.
  private func defaultsRead() {
    defaultsReadTimes.append(nanoseconds { design.readDefaults(on: 0) })
  }

  /// "Is this article read?", of ids held now (under a capacity, the inbound changes
  /// trimmed the oldest ids of those held before them).
  private func probeReads() {
    for id in design.ids(on: 0).prefix(workload.readRuns) {
      readTimes.append(
        nanoseconds { precondition(design.contains(id, on: 0), "\(design.name), \(workload.name): \(id) gone") })
    }
  }

  /// The figures, once every phase ran.
  func row() -> CollectionRow {
    let (final, writesPerEdit, rounds, recordBytes) = settled ?? ([], 0, 0, 0)
    let removedIDs = Set(removed.joined())
    // Under a capacity the oldest edits of the history go; every id added later stays.
    let trimmed = workload.capacity == nil ? [] : Set(initial).subtracting(removedIDs).subtracting(final)
    let expected = Set(initial).union(added).subtracting(removedIDs).subtracting(trimmed)
    let newestTrimmed = trimmed.compactMap { edit[$0] }.max() ?? -1
    let oldestKept = final.compactMap { edit[$0] }.min() ?? Int.max
    // The UserDefaults reads of the key an inbound change made, as counted, at one
    // read's time.
    let readsPerInbound = Double(inboundReads) / Double(max(1, inboundTimes.count))
    let beyondReads = median(inboundTimes) - readsPerInbound * median(defaultsReadTimes)
    let offlineAdds = Double(workload.offlineAdds)
    return CollectionRow(
      design: design.name, workload: workload.name, ids: final.count, recordBytes: recordBytes,
      recordOverSameElementsBlob: sameElementsBlobBytes.map { ratio(Double(recordBytes), Double($0)) },
      storeWritesPerEdit: (writesPerEdit * 100).rounded() / 100, insertMilliseconds: milliseconds(median(insertTimes)),
      batchPushMilliseconds: milliseconds(median(pushTimes)),
      insertWithPushShareMilliseconds: milliseconds(median(insertTimes) + median(pushTimes) / offlineAdds),
      inboundIDs: workload.inboundBatch, inboundMilliseconds: milliseconds(median(inboundTimes)),
      markWithPushMilliseconds: markTimes.isEmpty ? nil : milliseconds(median(markTimes)),
      defaultsReadMilliseconds: milliseconds(median(defaultsReadTimes)),
      defaultsReadsPerInbound: (readsPerInbound * 100).rounded() / 100,
      inboundBeyondReadsMilliseconds: milliseconds(beyondReads), readMilliseconds: milliseconds(median(readTimes)),
      marksLost: expected.subtracting(final).count, removalsUndone: removedIDs.intersection(final).count,
      roundsToAgree: [firstRounds, rounds], trimmed: trimmed.count, trimKeepsNewestEdits: oldestKept >= newestTrimmed,
      insertNanosecondsMedian: median(insertTimes),
      insertWithPushNanoseconds: median(insertTimes) + median(pushTimes) / offlineAdds,
      inboundNanosecondsMedian: median(inboundTimes), inboundBeyondReadsNanoseconds: beyondReads,
      markWithPushNanoseconds: median(markTimes))
  }

  /// Uploads, delivers and syncs until every device holds the same ids (at most 10
  /// rounds); the number of rounds.
  private func converge() -> Int {
    var rounds = 0
    func agreed() -> Bool {
      let first = design.ids(on: 0)
      return (1..<3).allSatisfy { design.ids(on: $0) == first }
    }
    repeat {
      cloud.upload()
      cloud.download()
      for index in 0..<3 { design.sync(on: index) }
      rounds += 1
    } while !agreed() && rounds < 10
    return rounds
  }
}

/// The `collections` section: every design under every workload, side by side.
enum CollectionsBench {
  static func run() -> [CollectionRow] {
    var rows: [CollectionRow] = []
    let history = CollectionWorkload(name: "read history (25,000 ids)", initialCount: 25_000)
    rows += compare(history) { cloud, tag in
      [
        HandRolledBlobDesign(cloud: cloud(), tag: tag),
        EngineSetDesign<PackedSet<UInt32>>(name: "packed set", cloud: cloud(), tag: tag, merge: .set),
        EngineSetDesign<[Int]>(name: "array set", cloud: cloud(), tag: tag, merge: .set),
      ]
    }
    var overTime = CollectionWorkload(name: "read history marked 25 at a time", initialCount: 25_000)
    overTime.batchSize = 25
    overTime.rotating = true
    overTime.inboundBatch = 25
    rows += compare(overTime) { cloud, tag in
      [
        HandRolledBlobDesign(cloud: cloud(), tag: tag),
        EngineSetDesign<PackedSet<UInt32>>(name: "packed set", cloud: cloud(), tag: tag, merge: .set),
      ]
    }
    var capped = CollectionWorkload(name: "read history trimmed to 20,000", initialCount: 25_000)
    capped.capacity = 20_000
    capped.singleMarks = 21
    rows += compare(capped) { cloud, tag in
      [
        HandRolledBlobDesign(cloud: cloud(), tag: tag, capacity: 20_000),
        EngineSetDesign<PackedSet<UInt32>>(
          name: "packed set", cloud: cloud(), tag: tag, merge: .set(capacity: 20_000)),
      ]
    }
    rows += compare(CollectionWorkload(name: "favorites (180 ids)", initialCount: 180)) { cloud, tag in
      [
        HandRolledBlobDesign(cloud: cloud(), tag: tag),
        EngineSetDesign<PackedSet<UInt32>>(name: "packed set", cloud: cloud(), tag: tag, merge: .set),
        EngineSetDesign<[Int]>(name: "array set", cloud: cloud(), tag: tag, merge: .set),
      ]
    }
    rows += compare(CollectionWorkload(name: "favorites (180 string ids)", initialCount: 180)) { cloud, tag in
      [
        HandRolledStringsDesign(cloud: cloud(), tag: tag),
        EngineSetDesign<[String]>(name: "string set", cloud: cloud(), tag: tag, merge: .set),
      ]
    }
    for realistic in [false, true] {
      var starred = CollectionWorkload(
        name: realistic ? "starred (300 articles, varied titles)" : "starred (300 articles, one title repeated)",
        initialCount: 300)
      starred.removals = 5
      rows += compare(starred) { cloud, tag in
        [
          HandRolledJSONDesign(cloud: cloud(), tag: tag, realistic: realistic),
          EngineSetDesign<[StarredArticle]>(
            name: "codable set", cloud: cloud(), tag: tag, compressed: false, realistic: realistic),
          EngineSetDesign<[StarredArticle]>(
            name: "codable set, compressed", cloud: cloud(), tag: tag, compressed: true, realistic: realistic),
        ]
      }
    }
    return rows
  }

  /// The workload under each design, each on a cloud of its own, their timed phases
  /// taking turns (``CollectionRun/interleave(_:)``); the first design is the
  /// hand-rolled one every ratio compares with.
  private static func compare(
    _ workload: CollectionWorkload,
    designs: (_ cloud: () -> SimulatedCloud, _ tag: String) -> [any CollectionDesign]
  ) -> [CollectionRow] {
    let tag = "collections-\(UUID().uuidString.prefix(6))"
    var clouds: [SimulatedCloud] = []
    let made = designs(
      {
        let cloud = SimulatedCloud()
        clouds.append(cloud)
        return cloud
      }, tag)
    let runs = zip(made, clouds).map { CollectionRun(workload, design: $0, cloud: $1) }
    CollectionRun.interleave(runs)
    let group = runs.map { $0.row() }
    let handRolled = group.first?.insertNanosecondsMedian ?? 0
    let handRolledInbound = group.first?.inboundNanosecondsMedian ?? 0
    let handRolledMark = group.first?.markWithPushNanoseconds ?? 0
    return group.map { row in
      var row = row
      row.insertOverHandRolled = ratio(row.insertNanosecondsMedian, handRolled)
      row.insertWithPushOverHandRolled = ratio(row.insertWithPushNanoseconds, handRolled)
      row.inboundOverHandRolled = ratio(row.inboundNanosecondsMedian, handRolledInbound)
      row.inboundBeyondReadsOverHandRolled = ratio(row.inboundBeyondReadsNanoseconds, handRolledInbound)
      if row.markWithPushMilliseconds != nil {
        row.markWithPushOverHandRolled = ratio(row.markWithPushNanoseconds, handRolledMark)
      }
      return row
    }
  }
}

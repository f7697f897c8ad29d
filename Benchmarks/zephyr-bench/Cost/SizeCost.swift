import Foundation
import Zephyr
import ZephyrTesting

/// Figures for one store size: its sections run in order, on two devices over one cloud.
func measure(keys count: Int, runs: Int) -> SizeReport {
  let bench = SizeCost(count: count, runs: runs)
  defer { bench.tearDown() }
  let upload = bench.firstUpload()
  let steady = bench.steadyState()
  let inbound = bench.inboundEvent()
  let localEdit = bench.localEdit()
  let typedSet = bench.typedSet()
  let floors = bench.foundationFloors()
  bench.a.coordinator.sync()
  let overhead = bench.recordOverhead()
  return SizeReport(
    keys: count, upload: upload, steady: steady, inbound: inbound, localEdit: localEdit, typedSet: typedSet,
    floors: floors, overhead: overhead)
}

/// One store size's devices and keys, and one method per section of the report.
struct SizeCost {
  let count: Int
  let runs: Int
  let cloud: SimulatedCloud
  let a: BenchDevice
  let b: BenchDevice
  let keys: [String]

  init(count: Int, runs: Int) {
    self.count = count
    self.runs = runs
    let tag = "\(count)-\(UUID().uuidString.prefix(6))"
    cloud = SimulatedCloud(limits: limits(for: count))
    a = BenchDevice(name: "A", cloud: cloud, tag: tag)
    b = BenchDevice(name: "B", cloud: cloud, tag: tag)
    keys = (0..<count).map(key)
    for (index, name) in keys.enumerated() { a.defaults.set(value(index).foundationValue, forKey: name) }
  }

  func tearDown() {
    a.tearDown()
    b.tearDown()
  }

  /// (2) First upload; then B takes it and both devices monitor every key.
  func firstUpload() -> SizeReport.FirstUpload {
    let writesBefore = a.store.statistics
    let firstUpload = nanoseconds { a.coordinator.sync() }
    let uploadWrites = a.store.statistics.writes - writesBefore.writes
    let uploadSynchronizations = a.store.statistics.synchronizeCalls - writesBefore.synchronizeCalls
    cloud.upload()
    cloud.download(to: "B", notify: false)
    b.coordinator.sync()
    a.coordinator.addKeysToBeMonitored(keys: keys)
    b.coordinator.addKeysToBeMonitored(keys: keys)
    return SizeReport.FirstUpload(
      nanoseconds: firstUpload, writes: uploadWrites, synchronizeCalls: uploadSynchronizations)
  }

  /// (1) Steady state, and its floor: read the persistent domain and the store, convert.
  func steadyState() -> SizeReport.Steady {
    var steady: [Double] = []
    var floor: [Double] = []
    let steadyBefore = a.store.statistics
    for _ in 0..<runs {
      steady.append(nanoseconds { a.coordinator.sync() })
      floor.append(
        nanoseconds {
          let domain = a.defaults.persistentDomain(forName: a.suiteName) ?? [:]
          var converted = 0
          for (_, raw) in domain where PropertyListValue(bridging: raw) != nil { converted += 1 }
          for (_, stored) in a.store.allValues() where stored != .bool(false) { converted += 1 }
          precondition(converted >= count)
        })
    }
    return SizeReport.Steady(
      median: median(steady), floor: median(floor), writes: a.store.statistics.writes - steadyBefore.writes,
      synchronizeCalls: a.store.statistics.synchronizeCalls - steadyBefore.synchronizeCalls)
  }

  /// (3) One inbound event changing one key. B's edit is made, uploaded and downloaded
  /// into A's store cache untimed (the simulator's own download compares every key); the
  /// event that names the key is what is timed, as Apple delivers it.
  func inboundEvent() -> Double {
    var inbound: [Double] = []
    for run in 0..<runs {
      let index = (run * 7919) % count
      b.defaults.set(value(index, version: run + 1).foundationValue, forKey: key(index))
      b.coordinator.sync(keys: [key(index)])
      cloud.upload(from: "B")
      cloud.download(to: "A", notify: false)
      inbound.append(
        nanoseconds { cloud.post(ExternalChange(reason: .serverChange, keys: [key(index)]), to: "A") })
      precondition(
        PropertyListValue(bridging: a.defaults.object(forKey: key(index)) ?? 0) == value(index, version: run + 1),
        "the inbound event did not apply B's edit")
    }
    return median(inbound)
  }

  /// (4) One local edit picked up from didChangeNotification.
  func localEdit() -> Double {
    var localEdit: [Double] = []
    for run in 0..<runs {
      let index = (run * 104_729 + 1) % count
      a.defaults.set(value(index, version: 1_000 + run).foundationValue, forKey: key(index))
      localEdit.append(
        nanoseconds {
          NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: a.defaults)
          a.coordinator.waitForPendingLocalEdits()
        })
    }
    return median(localEdit)
  }

  /// (4b) One typed set, pushed: it knows its key, so nothing reads the domain. Timed up
  /// to the end of its push (the coalesced batch on the local-edit queue). String keys only.
  /// Its floor, run by run: the two writes it cannot avoid, Foundation's `set` of a new
  /// value (on Linux its cost grows with the domain) and the store's of a record. (The
  /// plain set is then pushed, untimed.)
  func typedSet() -> (median: Double, floor: Double) {
    var typedSet: [Double] = []
    var floor: [Double] = []
    for run in 0..<runs {
      let index = ((run * 7_919 + 3) % (count / 5)) * 5
      let typedKey = SyncKey<String>(key(index), default: "")
      _ = a.coordinator[typedKey]  // its first use (and the reconcile it schedules) is not timed
      a.coordinator.waitForPendingLocalEdits()
      typedSet.append(
        nanoseconds {
          a.coordinator[typedKey] = "typed \(run)"
          a.coordinator.waitForPendingLocalEdits()
        })
      guard let record = a.store.value(forKey: key(index)) else { preconditionFailure("the typed set was not pushed") }
      let defaults = a.defaults
      floor.append(
        nanoseconds {
          defaults.set("floor \(run)", forKey: key(index))
          a.store.setValue(record, forKey: key(index))
        })
      a.coordinator.waitForPendingLocalEdits()
    }
    return (median(typedSet), median(floor))
  }

  /// Foundation's own floors, after a write: reading one key (which an inbound event
  /// must do) and reading the domain (which a didChangeNotification, naming no key, must do).
  func foundationFloors() -> SizeReport.Floors {
    var keyReadAfterWrite: [Double] = []
    var domainReadAfterWrite: [Double] = []
    for run in 0..<runs {
      let index = (run * 104_729 + 2) % count
      a.defaults.set(value(index, version: 2_000 + run).foundationValue, forKey: key(index))
      keyReadAfterWrite.append(nanoseconds { _ = a.defaults.object(forKey: key(index)) })
      a.defaults.set(value(index, version: 3_000 + run).foundationValue, forKey: key(index))
      domainReadAfterWrite.append(nanoseconds { _ = a.defaults.persistentDomain(forName: a.suiteName) })
    }
    return SizeReport.Floors(keyRead: median(keyReadAfterWrite), domainRead: median(domainReadAfterWrite))
  }

  /// (5) Record overhead, on the server once every write reached it.
  func recordOverhead() -> SizeReport.Overhead {
    cloud.upload()
    let server = cloud.serverValues
    var overhead = 0
    var records = 0
    for (index, name) in keys.enumerated() {
      guard let stored = server[name] else { continue }
      overhead +=
        SimulatedCloud.binaryPlistSize(of: stored) - SimulatedCloud.binaryPlistSize(of: value(index, version: 0))
      records += 1
    }
    let extraKeys = Set(server.keys).subtracting(keys).count
    return SizeReport.Overhead(
      bytesPerKey: records > 0 ? Double(overhead) / Double(records) : 0,
      storeKeysPerSyncedKey: ratio(Double(server.count - extraKeys), Double(count)), extraKeys: extraKeys)
  }
}

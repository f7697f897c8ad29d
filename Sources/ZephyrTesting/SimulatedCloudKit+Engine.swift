import Foundation
import Zephyr

// What a simulated `CKSyncEngine` does for one device: fetch and send, as a sequence of
// events, each handled (and the device's state saved) before the next.

extension SimulatedCloudKit {
  /// The most changes one request carries.
  static let requestLimit = 400

  /// Hands `event` to the device's store; `false` when a crash was due: the device was
  /// killed before saving its state, and restarted from its file.
  func deliver(_ event: CloudKitSyncEvent, to device: SimulatedCloudKitDevice) -> Bool {
    let crash = world.withLock { world in
      guard let remaining = world.crashes[device.name] else { return false }
      world.crashes[device.name] = remaining == 0 ? nil : remaining - 1
      return remaining == 0
    }
    device.persistence.failing.withLock { $0 = crash }
    device.core.handle(event)
    device.persistence.failing.withLock { $0 = false }
    guard crash else { return true }
    device.counters.withLock { $0.crashes += 1 }
    device.start(clock: clock)
    return false
  }

  /// A fetch: a zone deletion first when the device's token is from an earlier zone,
  /// then the changed records in batches of 400, the new token, and `didFetchChanges`.
  func fetch(_ device: SimulatedCloudKitDevice) {
    let name = device.name
    guard let account = world.withLock({ $0.accounts[name] ?? nil }) else { return }
    guard deliver(.willFetchChanges, to: device) else { return }
    let token = device.engine.state.withLock { $0.token }
    let (server, echo) = world.withLock { ($0.servers[account] ?? CloudKitServer(), $0.echoesOwnSaves) }
    var since: UInt64 = 0
    if let token {
      if token.incarnation == server.incarnation {
        since = token.sequence
      } else if let reason = server.lastDeletion {
        guard deliver(.fetchedZoneDeletion(reason), to: device) else { return }
      }
    }
    let (modified, deleted) = server.changes(since: since, for: name, echo: echo)
    var chunks = stride(from: 0, to: modified.count, by: Self.requestLimit).map {
      Array(modified[$0..<min($0 + Self.requestLimit, modified.count)])
    }
    if chunks.isEmpty, !deleted.isEmpty { chunks = [[]] }
    for (index, chunk) in chunks.enumerated() {
      let event = CloudKitSyncEvent.fetchedRecordZoneChanges(modifications: chunk, deletions: index == 0 ? deleted : [])
      guard deliver(event, to: device) else { return }
    }
    device.engine.state.withLock {
      $0.token = SimulatedSyncEngine.Token(incarnation: server.incarnation, sequence: server.sequence)
    }
    guard deliver(.stateUpdate(device.engine.serialization), to: device) else { return }
    _ = deliver(.didFetchChanges, to: device)
  }

  /// A send: the zone save when due, then every change pending at the start, in batches.
  func send(_ device: SimulatedCloudKitDevice) {
    let name = device.name
    guard let account = world.withLock({ $0.accounts[name] ?? nil }) else { return }
    device.core.synchronize()  // the adapter's timer: a backoff that has passed releases the queue
    guard deliver(.willSendChanges, to: device) else { return }
    let fault = world.withLock { world -> Fault? in
      guard var faults = world.faults[name], !faults.isEmpty else { return nil }
      let first = faults.removeFirst()
      world.faults[name] = faults
      return first
    }
    if fault == .networkFailure {
      _ = deliver(.didSendChanges, to: device)
      return
    }
    if device.engine.state.withLock({ $0.needsZoneSave }) {
      world.withLock { $0.servers[account, default: CloudKitServer()].zoneExists = true }
      device.engine.state.withLock { $0.needsZoneSave = false }
      guard deliver(.sentZoneSave(nil), to: device) else { return }
    }
    var remaining = device.engine.state.withLock { $0.pending }
    var pendingFault = fault
    while !remaining.isEmpty {
      let slice = Array(remaining.prefix(Self.requestLimit))
      remaining.removeFirst(slice.count)
      guard let batch = device.core.nextBatch(from: slice, limit: Self.requestLimit) else { continue }
      // The engine drops every change it sent, whatever the outcome.
      device.engine.remove(batch.saves.map { .save($0.recordName) } + batch.deletions.map { .delete($0) })
      let result = apply(batch, from: name, account: account, fault: pendingFault)
      pendingFault = nil
      device.counters.withLock {
        $0.requests += 1
        $0.recordsSent += batch.count
        $0.bytesSent += batch.saves.reduce(0) { $0 + $1.key.utf8.count + $1.payload.count }
      }
      guard deliver(.sentRecordZoneChanges(result), to: device) else { return }
      guard deliver(.stateUpdate(device.engine.serialization), to: device) else { return }
    }
    _ = deliver(.didSendChanges, to: device)
  }

  private func apply(_ batch: RecordChangeBatch, from device: String, account: String, fault: Fault?)
    -> SentRecordChanges
  {
    world.withLock { world in
      var server = world.servers[account] ?? CloudKitServer()
      defer { world.servers[account] = server }
      guard batch.count <= Self.requestLimit else {
        return SentRecordChanges(
          failedSaves: batch.saves.map { .init(record: $0, error: .limitExceeded) },
          failedDeletes: batch.deletions.map { .init(recordName: $0, error: .limitExceeded) })
      }
      var batch = batch
      var lost: [SentRecordChanges.FailedSave] = []
      switch fault {
      case .zoneNotFound:
        server.deleteZone(reason: .deleted)
      case .serverRecordChanged:
        if let first = batch.saves.first {
          server.zoneExists = true
          let touched = server.records[first.recordName]?.record ?? first
          _ = server.store(touched, writer: nil)
        }
      case .unknownItem:
        if let first = batch.saves.first {
          server.records[first.recordName] = nil
          lost = [.init(record: first, error: .unknownItem)]
          batch.saves.removeFirst()
        }
      case .batchRequestFailed:
        return SentRecordChanges(
          failedSaves: batch.saves.map { .init(record: $0, error: .batchRequestFailed) },
          failedDeletes: batch.deletions.map { .init(recordName: $0, error: .batchRequestFailed) })
      case .quotaExceeded, .networkFailure, nil:
        break
      }
      var result = server.apply(
        batch, writer: device, quota: world.quotaBytes, atomic: world.atomicBatches || batch.atomicByZone,
        fault: fault == .quotaExceeded ? .quotaExceeded : nil)
      result.failedSaves = lost + result.failedSaves
      return result
    }
  }
}

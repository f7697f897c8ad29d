import Foundation
import Zephyr

/// One device's sync engine, as `SimulatedCloudKit` models `CKSyncEngine`: the pending
/// changes (in order, without duplicates), whether the zone is to be saved, the account
/// and the fetch token, and a state serialization of them.
final class SimulatedSyncEngine: CloudKitSyncEngineDriver {
  struct Token: Equatable {
    var incarnation: Int
    var sequence: UInt64
  }

  struct State {
    var pending: [PendingRecordChange] = []
    var needsZoneSave = false
    var token: Token?
  }

  let state: Locked<State>

  init(serialization: Data?) {
    state = Locked(Self.state(from: serialization))
  }

  func add(_ changes: [PendingRecordChange]) {
    state.withLock { state in
      var known = Set(state.pending)
      for change in changes where known.insert(change).inserted { state.pending.append(change) }
    }
  }

  func remove(_ changes: [PendingRecordChange]) {
    let removed = Set(changes)
    state.withLock { $0.pending.removeAll(where: removed.contains) }
  }

  func addZoneSave() {
    state.withLock { $0.needsZoneSave = true }
  }

  /// Forgets everything: a new engine for a new account.
  func reset() {
    state.withLock { $0 = State() }
  }

  /// The state serialization: the token, the zone save and the pending changes, one a line.
  var serialization: Data {
    let state = self.state.withLock { $0 }
    var lines = [state.token.map { "\($0.incarnation) \($0.sequence)" } ?? "-", state.needsZoneSave ? "zone" : "-"]
    lines += state.pending.map {
      switch $0 {
      case .save(let name): "s \(name)"
      case .delete(let name): "d \(name)"
      }
    }
    return Data(lines.joined(separator: "\n").utf8)
  }

  private static func state(from serialization: Data?) -> State {
    var state = State()
    guard let serialization else { return state }
    let lines = String(decoding: serialization, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    if let first = lines.first {
      let parts = first.split(separator: " ")
      if parts.count == 2, let incarnation = Int(parts[0]), let sequence = UInt64(parts[1]) {
        state.token = Token(incarnation: incarnation, sequence: sequence)
      }
    }
    state.needsZoneSave = lines.dropFirst().first == "zone"
    for line in lines.dropFirst(2) where line.count > 2 {
      let name = String(line.dropFirst(2))
      state.pending.append(line.hasPrefix("s ") ? .save(name) : .delete(name))
    }
    return state
  }
}

/// A device's state file, which fails the one save a test chose: the process is killed
/// before the state is saved.
final class CrashablePersistence: CloudKitStatePersistence {
  let file: CloudKitStateFile
  let failing = Locked(false)

  init(url: URL) {
    file = CloudKitStateFile(url: url)
  }

  func load() -> CloudKitStoreState? { file.load() }

  func save(_ state: CloudKitStoreState) -> Bool {
    failing.withLock { $0 } ? false : file.save(state)
  }
}

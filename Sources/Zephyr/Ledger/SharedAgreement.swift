import Foundation

/// Each key's last agreed state, kept in a suite that several processes sync (an app and
/// its extensions), so that their separate ledgers agree (see
/// ``SyncConfiguration/sharedByProcesses``).
///
/// One bookkeeping key per synced key, `Zephyr.agreed.<key>`, never synced:
/// `["v", generation, origin, fingerprint]` for a value, `["d", generation, origin]` for
/// a delete, and for a key merged by a strategy its whole state (``ReplicaState``) after
/// them: a process that takes another's agreement takes the state its value shows, so it
/// never mistakes what the other process merged for an edit of its own. Only settled
/// states are kept (never a merge written ahead).
enum SharedAgreement {
  static let prefix = "Zephyr.agreed."

  static func key(for key: String) -> String { prefix + key }

  static func encode(_ entry: LedgerEntry) -> PropertyListValue {
    let stamp: [PropertyListValue] = [.integer(Int64(entry.generation)), .string(entry.origin)]
    let memory: [PropertyListValue] = entry.state.map { [.array($0.encodedFields)] } ?? []
    switch entry.agreed {
    case .value(let fingerprint):
      return .array([.string("v")] + stamp + [.integer(Int64(bitPattern: fingerprint.rawValue))] + memory)
    case .deleted:
      return .array([.string("d")] + stamp + memory)
    }
  }

  /// The entry `value` holds; `nil` for anything else (garbage is ignored, and a state
  /// that does not read is left out). An earlier build's memory is read, to be upgraded.
  static func decode(_ value: PropertyListValue?) -> LedgerEntry? {
    guard case .array(let fields)? = value, fields.count >= 3, case .string(let kind) = fields[0],
      case .integer(let generation) = fields[1], generation >= 1, UInt64(generation) <= Generation.maximum,
      case .string(let origin) = fields[2]
    else { return nil }
    var entry: LedgerEntry
    let rest: ArraySlice<PropertyListValue>
    switch kind {
    case "v":
      guard fields.count >= 4, case .integer(let fingerprint) = fields[3] else { return nil }
      entry = LedgerEntry(
        generation: UInt64(generation), agreed: .value(Fingerprint(rawValue: UInt64(bitPattern: fingerprint))),
        origin: origin)
      rest = fields.dropFirst(4)
    case "d":
      entry = LedgerEntry(generation: UInt64(generation), agreed: .deleted, origin: origin)
      rest = fields.dropFirst(3)
    default:
      return nil
    }
    switch rest.first {
    case nil:
      break
    case .array(let fields)? where rest.count == 1:
      if case .success(let state) = ReplicaState.decode(fields) { entry.state = state }
    case .data(let data)? where rest.count == 1:
      var reader = ByteReader(bytes: [UInt8](data), position: 0)
      if let memory = try? reader.memory(), reader.isAtEnd { entry.memory = memory }
    default:
      return nil
    }
    return entry
  }
}

extension UserDefaultsDomain {
  /// The shared agreed states of `keys` (see ``SharedAgreement``).
  func sharedAgreements(of keys: some Sequence<String>) -> [String: LedgerEntry] {
    let values = values(forKeys: keys.map(SharedAgreement.key(for:))) { _, _ in true }.values
    var entries: [String: LedgerEntry] = [:]
    for key in keys {
      entries[key] = SharedAgreement.decode(values[SharedAgreement.key(for: key)])
    }
    return entries
  }

  /// Every key that has a shared agreed state.
  func keysWithSharedAgreements() -> [String] {
    persistentValues().values.keys.filter { $0.hasPrefix(SharedAgreement.prefix) }
      .map { String($0.dropFirst(SharedAgreement.prefix.count)) }.sorted()
  }
}

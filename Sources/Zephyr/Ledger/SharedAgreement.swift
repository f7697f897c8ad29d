import Foundation

/// Each key's last agreed state, kept in a suite that several processes sync (an app and
/// its extensions), so that their separate ledgers agree (see
/// ``SyncConfiguration/sharedByProcesses``).
///
/// One bookkeeping key per synced key, `Zephyr.agreed.<key>`, never synced:
/// `["v", generation, origin, fingerprint]` for a value, `["d", generation, origin]` for
/// a delete, and for a key merged by a strategy its whole state (``ReplicaState``) after
/// them: a process that takes another's agreement takes the state its value shows, so it
/// never mistakes what the other process merged for an edit of its own. Last comes the
/// foreign values the agreed record names (``ForeignName``), each an integer.
///
/// A pull's agreement is written ahead of its `UserDefaults` write, marked pending (`"pv"`,
/// `"pd"`), and settled after it. A process that finds a pending agreement takes it only
/// when the suite shows its value (the write was made; the writer may have died before
/// settling it); otherwise it is no agreement. So a crash between a pull's write and its
/// agreement never leaves the suite holding a value no process agreed on, which another
/// process would take for its own edit.
enum SharedAgreement {
  static let prefix = "Zephyr.agreed."

  static func key(for key: String) -> String { prefix + key }

  static func encode(_ entry: LedgerEntry, pending: Bool = false) -> PropertyListValue {
    let stamp: [PropertyListValue] = [.integer(Int64(entry.generation)), .string(entry.origin)]
    let memory: [PropertyListValue] =
      (entry.state.map { [.array($0.encodedFields)] } ?? []) + entry.madeOver.map(\.encoded)
    let mark = pending ? "p" : ""
    switch entry.agreed {
    case .value(let fingerprint):
      return .array([.string(mark + "v")] + stamp + [.integer(Int64(bitPattern: fingerprint.rawValue))] + memory)
    case .deleted:
      return .array([.string(mark + "d")] + stamp + memory)
    }
  }

  /// Whether `value` is an agreement written ahead of its pull's `UserDefaults` write.
  static func isPending(_ value: PropertyListValue?) -> Bool {
    guard case .array(let fields)? = value, case .string(let kind)? = fields.first else { return false }
    return kind.hasPrefix("p")
  }

  /// The entry `value` holds; `nil` for anything else (garbage is ignored, and a state
  /// that does not read is left out).
  static func decode(_ value: PropertyListValue?) -> LedgerEntry? {
    guard case .array(let fields)? = value, fields.count >= 3, case .string(let marked) = fields[0],
      case .integer(let generation) = fields[1], generation >= 1, UInt64(generation) <= Generation.maximum,
      case .string(let origin) = fields[2]
    else { return nil }
    var entry: LedgerEntry
    let rest: ArraySlice<PropertyListValue>
    let kind = marked.hasPrefix("p") ? String(marked.dropFirst()) : marked
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
    var parts = rest
    if case .array(let fields)? = parts.first {
      if case .success(let state) = ReplicaState.decode(fields) { entry.state = state }
      parts = parts.dropFirst()
    }
    guard parts.count <= ForeignName.maximumNamed else { return nil }
    for field in parts {
      guard let name = ForeignName(field: field) else { return nil }
      entry.madeOver.append(name)
    }
    return entry
  }
}

extension UserDefaultsDomain {
  /// The shared agreed states of `keys` (see ``SharedAgreement``). Given the keys' local
  /// values, an agreement written ahead of a pull counts only when the value shows it.
  func sharedAgreements(
    of keys: some Sequence<String>, local: [String: PropertyListValue]? = nil
  ) -> [String: LedgerEntry] {
    let values = values(forKeys: keys.map(SharedAgreement.key(for:))) { _, _ in true }.values
    var entries: [String: LedgerEntry] = [:]
    for key in keys {
      let value = values[SharedAgreement.key(for: key)]
      guard let entry = SharedAgreement.decode(value) else { continue }
      if let local, SharedAgreement.isPending(value), !entry.agrees(with: local[key]) { continue }
      entries[key] = entry
    }
    return entries
  }

  /// Every key that has a shared agreed state.
  func keysWithSharedAgreements() -> [String] {
    persistentValues().values.keys.filter { $0.hasPrefix(SharedAgreement.prefix) }
      .map { String($0.dropFirst(SharedAgreement.prefix.count)) }.sorted()
  }
}

import Foundation

/// What one store key holds for a key merged by a strategy: the write that put it there
/// (a generation and the writing device) and the key's whole merge state, tagged with
/// the strategy that merges it.
///
/// ```
/// ["z2", 9, "k3f9qa", "dictionary", ["b7d2mx.x1", "k3f9qa.q7"], <versions>, [[0, 7, ["theme", "dark"]], [1, 9, ["size", 12]]]]
/// ```
///
/// 1. the format tag `z2`;
/// 2. the generation of the write (its Lamport number) and 3. the device that made it;
/// 4. the strategy (``ReplicaKind``): any device merges the key by it, whether or not it
///    has used the key yet;
/// 5. the writers the state has seen (replica ids), sorted, and 6. per writer, the
///    generation of its latest write seen, as unsigned LEB128 numbers in one `Data`;
/// 7. the groups, oldest write first: the writer's index in 5, the generation of the
///    write, then the parts it added that are still held (elements; `[key, value]`
///    entries; or one value). A collection's group with no part is a write of an empty
///    collection (so the key reads as empty, not deleted). A `.set`'s and a `.union`'s
///    groups are one `Data` instead: the writes as numbers, then each element's bytes
///    once, with no property-list object per element (see ``ElementMembership``).
/// 8. a `.set` or `.union` only, when a write gave an order its parts do not read in (a
///    reorder, an insert in the middle): the ``ElementOrder``, as the writer's index in 5,
///    the generation of the write, then its elements as varint positions in one `Data`
///    (into the parts of 7, as listed; past them, into the elements not held, written in
///    full after it). Most states have none: an append reads in order without one.
/// 8.–10. a packed set only (strategy `packed`): its groups are its writes only, as
///    varint pairs in one `Data` (see ``PackedMembership``); the ids are written once,
///    with the write of each.
/// Last, only when the state holds nothing (the key was deleted): the date of the write,
/// by the writer's clock, so that the record is collected once it is older than
/// ``SyncConfiguration/tombstoneLifetime``, as a last-writer-wins tombstone is.
///
/// The value is not stored beside the state: it is the state's (``ReplicaState/value(strategy:key:resolving:)``),
/// so a set of 25,000 elements is stored once.
struct ReplicaRecord: Sendable, Equatable {
  var stamp: Stamp
  var state: ReplicaState
  /// When the deleted state was written (a state holding nothing); `nil` otherwise.
  var deleted: Date?

  init(stamp: Stamp, state: ReplicaState, deleted: Date? = nil) {
    self.stamp = stamp
    self.state = state
    self.deleted = deleted
  }

  /// The record of `state` written by `stamp` at `now`: dated when the state holds
  /// nothing (a delete).
  init(stamp: Stamp, state: ReplicaState, writtenAt now: Date) {
    self.init(stamp: stamp, state: state, deleted: state.isDeleted ? now : nil)
  }

  static let tag = "z2"
  static let formatVersion = 2

  /// The record as the store holds it.
  var encoded: PropertyListValue {
    .array(
      [.string(Self.tag), .integer(Int64(stamp.generation)), .string(stamp.origin)] + state.encodedFields
        + (deleted.map { [.date($0)] } ?? []))
  }

  /// Reads a record whose tag is `z2`; a reason when it is broken.
  static func decode(_ fields: [PropertyListValue]) -> Result<ReplicaRecord, ReplicaDecodingError> {
    // (The state's own decoding checks how many fields its strategy has: 4, or 7 for a
    // packed set.)
    var fields = fields
    var deleted: Date?
    if fields.count > 7, case .date(let date)? = fields.last {
      deleted = date
      fields.removeLast()
    }
    guard (7...8).contains(fields.count) || fields.count == 10 else {
      return .failure(
        ReplicaDecodingError(reason: "record has \(fields.count) fields, expected 7, 8 or 10 (and a date)"))
    }
    guard case .integer(let generation) = fields[1], generation >= 1, UInt64(generation) <= Generation.maximum else {
      return .failure(ReplicaDecodingError(reason: "generation is not an integer in 1...\(Generation.maximum)"))
    }
    guard case .string(let origin) = fields[2], !origin.isEmpty, origin.count <= SyncRecord.maximumOriginLength else {
      return .failure(ReplicaDecodingError(reason: "origin is not a short string"))
    }
    return ReplicaState.decode(Array(fields[3...])).map {
      ReplicaRecord(stamp: Stamp(generation: UInt64(generation), origin: origin), state: $0, deleted: deleted)
    }
  }
}

/// Why a replicated state does not read.
struct ReplicaDecodingError: Error, Equatable {
  var reason: String
  /// Set when the state names a strategy this build does not know (a newer Zephyr's).
  var unknownKind: String?
}

extension ReplicaState {
  /// The state as four property-list fields: the kind, the writers, their generations,
  /// the groups (see ``ReplicaRecord``); a packed set's groups name their writes only, and
  /// three more fields hold the ids (see ``PackedMembership``); a `.set`'s or `.union`'s
  /// ``ElementOrder``, when it has one, is a fifth. Also how the ledger caches it.
  /// (``encodedFields`` returns fields known to decode to the state, else these.)
  var computedFields: [PropertyListValue] {
    let writers = context.sortedEntries
    let index = Dictionary(uniqueKeysWithValues: writers.enumerated().map { ($1.origin, $0) })
    let dots = self.dots
    let list: PropertyListValue
    if kind == .packedSet {
      // Each write as a varint pair: its writer's index, and how far its generation
      // rises above the write before it (oldest first): two or three bytes a write.
      var previous: UInt64 = 0
      list = .data(
        Varint.encode(
          dots.flatMap { dot -> [UInt64] in
            defer { previous = dot.generation }
            return [UInt64(index[dot.origin] ?? 0), dot.generation - previous]
          }))
    } else if kind.holdsElements {
      // The writes as numbers and each element's bytes once (see ``ElementMembership``).
      list = .data(ElementMembership.encode(dots: dots, groups: groups, index: index))
    } else {
      list = .array(
        dots.map { dot in
          .array([.integer(Int64(index[dot.origin] ?? 0)), .integer(Int64(dot.generation))] + (groups[dot] ?? []))
        })
    }
    let orderField = order.map { order in
      [order.encoded(writers: index, parts: dots.flatMap { groups[$0] ?? [] })]
    }
    return [
      .string(kind.rawValue), .array(writers.map { .string($0.origin) }),
      .data(Varint.encode(writers.map(\.generation))), list,
    ] + (kind == .packedSet ? PackedMembership.encode(dots: dots, groups: groups) : orderField ?? [])
  }

  /// The most writers a state may name: far more devices (and app extensions, and
  /// reinstalls, each with an id of its own) than one person has.
  static let maximumWriters = 4_096

  /// Reads ``encodedFields``. Every group must name a known writer, at a generation its
  /// context includes, once, and hold parts of the kind's shape.
  static func decode(_ fields: [PropertyListValue]) -> Result<ReplicaState, ReplicaDecodingError> {
    func broken(_ reason: String) -> Result<ReplicaState, ReplicaDecodingError> {
      .failure(ReplicaDecodingError(reason: reason))
    }
    guard fields.count >= 4, case .string(let name) = fields[0] else { return broken("state has no strategy") }
    guard let kind = ReplicaKind(rawValue: name) else {
      return .failure(ReplicaDecodingError(reason: "unknown strategy \"\(name.prefix(40))\"", unknownKind: name))
    }
    guard fields.count == (kind == .packedSet ? 7 : 4) || (kind.holdsElements && fields.count == 5) else {
      return broken("state has the wrong number of fields")
    }
    guard case .array(let names) = fields[1], names.count <= maximumWriters, case .data(let numbers) = fields[2],
      let generations = Varint.decode(numbers), generations.count == names.count
    else { return broken("state writers do not match their generations") }
    var context = VersionVector()
    var origins: [String] = []
    for (name, generation) in zip(names, generations) {
      guard case .string(let origin) = name, !origin.isEmpty, origin.count <= SyncRecord.maximumOriginLength,
        (1...Generation.maximum).contains(generation), context[origin] == 0
      else { return broken("state writer is not a short, unique id with a generation") }
      origins.append(origin)
      context.include(Stamp(generation: generation, origin: origin))
    }
    let written: [(index: UInt64, generation: UInt64, parts: [PropertyListValue])]
    if kind == .packedSet {
      guard case .data(let blob) = fields[3], let writes = PackedMembership.writes(blob) else {
        return broken("packed state writes are not varint pairs")
      }
      switch PackedMembership.decode(fields[4...], groupCount: writes.count) {
      case .success(let members):
        written = zip(writes, members).map { ($0.index, $0.generation, $1.map { .unsignedInteger($0) }) }
      case .failure(let error): return .failure(error)
      }
    } else if kind.holdsElements, case .data(let blob) = fields[3] {
      switch ElementMembership.decode(blob) {
      case .success(let groups): written = groups
      case .failure(let error): return .failure(error)
      }
    } else {
      guard case .array(let list) = fields[3] else { return broken("state groups are not a list") }
      var groups: [(UInt64, UInt64, [PropertyListValue])] = []
      for item in list {
        guard case .array(let group) = item, group.count >= (kind.holdsSiblings ? 3 : 2),
          case .integer(let index) = group[0], index >= 0, case .integer(let generation) = group[1]
        else { return broken("state group is not a writer, a generation and parts") }
        groups.append((UInt64(index), UInt64(max(0, generation)), Array(group[2...])))
      }
      written = groups
    }
    var order: ElementOrder?
    if kind.holdsElements, fields.count == 5 {
      order = ElementOrder.decode(fields[4], origins: origins, context: context, parts: written.flatMap(\.parts))
      guard order != nil else { return broken("state order is not a write it has seen and positions of elements") }
    }
    var groups: [Stamp: [PropertyListValue]] = [:]
    for (index, generation, parts) in written {
      guard index < origins.count, generation >= 1 else {
        return broken("state group is not a writer, a generation and parts")
      }
      let dot = Stamp(generation: generation, origin: origins[Int(index)])
      guard context.includes(dot), groups[dot] == nil else {
        return broken("state group names a write it has not seen")
      }
      guard !kind.holdsSiblings || parts.count == 1 else { return broken("state sibling holds more than one value") }
      guard kind != .dictionary || parts.allSatisfy({ entry($0) != nil }) else {
        return broken("state entry is not a key and a value")
      }
      groups[dot] = parts
    }
    return .success(ReplicaState(kind: kind, groups: groups, context: context, order: order).keeping(fields: fields))
  }
}

import Foundation

/// The whole merge state of a key merged by a ``MergeStrategy`` other than
/// last-writer-wins: what its record in the store carries and what the ledger caches.
///
/// It is a state-based replicated data type of one shape for every strategy: a set of
/// *parts*, each added by one write (its *dot*, a ``Stamp``), and the *context*, every
/// write the state has seen (a ``VersionVector``). A part is an element (`.set`,
/// `.union`), an entry and its value (`.dictionary`), or the value itself (`.max`,
/// `.min`, `.custom`: the concurrent writes not yet replaced, their *siblings*). The
/// parts one write added are kept together, as a *group*: a batch of 1,000 ids costs one
/// dot, not 1,000.
///
/// The algebra:
/// - **Join** (``joined(with:)``): a part stays when both states hold it, or when one
///   holds it and the other has not seen its write. A part one side holds and the other
///   has seen but no longer holds was removed there, and goes. Contexts are unioned.
///   The join is commutative, associative and idempotent; so every device that has seen
///   the same writes holds the same state, whatever the order it saw them in.
/// - **Equality** is equality of states (parts with their dots, and contexts), not of
///   values: a state that holds the same value as another but has seen other writes is
///   another state, and is published.
/// - **A device with no history** of a key holds the empty state (no part, empty
///   context): it has observed no removal, so its first write only adds parts.
/// - **An edit** (``edited(to:dot:)``) removes the parts it no longer shows (the device
///   saw them: their dots are in its context) and adds what is new under a new dot.
/// - **Order** (`.set`, `.union`): beside the parts, an ``ElementOrder``, a
///   last-writer-wins register over the element sequence that a write sets when its array
///   does not read in its order otherwise (a reorder, an insert in the middle). The join
///   keeps the later write's (by ``Stamp`` order), and the value lists the held elements
///   in its order, then the others oldest write first: an array replicated without a
///   concurrent edit reads in its writer's order on every device, and after concurrent
///   edits every device computes one order.
///
/// A device's dots are numbered by its Lamport clock, and each process gives its writes a
/// replica id of its own (``EngineState/replicaID``), so one id's writes of one key are
/// made one after the other, each from a state that has seen the one before it: "the
/// context includes `id`'s write at generation g" then means every earlier one of `id`
/// too, and a version vector is context enough.
struct ReplicaState: Sendable, Hashable {
  /// How the state's parts make a value.
  var kind: ReplicaKind {
    didSet { encoding = nil }
  }
  /// Per write, the parts it added that are still held, in the order it added them.
  /// Every dot is in ``context``. An empty list is a *presence* mark of a collection
  /// kind: a write of an empty collection (which is not a delete) that no later write
  /// replaced; lists of parts never shrink to one.
  private(set) var groups: [Stamp: [PropertyListValue]] {
    didSet { encoding = nil }
  }
  /// Every write this state has seen.
  private(set) var context: VersionVector {
    didSet { encoding = nil }
  }
  /// The order of a `.set` or `.union` array's elements its latest reordering write gave
  /// (see ``ElementOrder``); `nil` when no write needed one, and for the other kinds. Its
  /// dot is in ``context``.
  private(set) var order: ElementOrder? {
    didSet { encoding = nil }
  }
  /// Fields known to decode to this state (the record's it was read from, or its own
  /// once computed), so that a state taken from the store, or pushed, is not encoded
  /// again for the ledger; dropped by every change. Not part of the state's equality.
  private var encoding: EncodedReplicaFields?

  static func == (lhs: ReplicaState, rhs: ReplicaState) -> Bool {
    lhs.kind == rhs.kind && lhs.context == rhs.context && lhs.groups == rhs.groups && lhs.order == rhs.order
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(kind)
    hasher.combine(groups)
    hasher.combine(context)
    hasher.combine(order)
  }

  /// The state's fields (see ``encodedFields``), computed once if not known yet.
  var encodedFields: [PropertyListValue] { encoding?.fields ?? computedFields }

  /// This state, its fields computed and kept: for a state that is encoded more than
  /// once (a pushed record's, cached by the ledger too).
  func keepingEncoding() -> ReplicaState {
    var kept = self
    kept.encoding = encoding ?? EncodedReplicaFields(fields: computedFields)
    return kept
  }

  /// A packed set's held ids as its kept fields pack them (the first field after the
  /// groups, see ``PackedMembership``): its value, without collecting and sorting the ids.
  /// Decoding checked that this blob holds exactly the groups' ids; its bytes are the
  /// writer's (another build may pick another Golomb parameter), and values are compared
  /// as sets (``shows(_:merged:)``), so the same set in other bytes is no edit.
  var keptPackedIds: Data? {
    guard kind == .packedSet, let fields = encoding?.fields, fields.count == 7, case .data(let ids) = fields[4] else {
      return nil
    }
    return ids
  }

  /// This state, remembering that `fields` decode to it.
  func keeping(fields: [PropertyListValue]) -> ReplicaState {
    var kept = self
    kept.encoding = EncodedReplicaFields(fields: fields)
    return kept
  }

  /// The empty state of `kind`: no part, nothing seen. What a device with no history of
  /// a key holds.
  init(kind: ReplicaKind) {
    self.init(kind: kind, groups: [:], context: VersionVector())
  }

  /// A state from its parts. Every dot joins the context, and so does the order's (kept by
  /// `.set` and `.union` only, its elements each once); empty groups are kept as
  /// presence marks by collection kinds, dropped by the others.
  init(
    kind: ReplicaKind, groups: [Stamp: [PropertyListValue]], context: VersionVector, order: ElementOrder? = nil
  ) {
    self.kind = kind
    var context = context
    var kept: [Stamp: [PropertyListValue]] = [:]
    for (dot, parts) in groups where !parts.isEmpty || !kind.holdsSiblings {
      // One order for the parts of a write, whoever built the state (a `.union` keeps
      // the order its write added them in: that is its value's order).
      kept[dot] = Self.canonical(parts, kind: kind)
      context.include(dot)
    }
    if kind.holdsElements, var order {
      var seen = Set<Fingerprint>()
      order.elements = order.elements.filter { seen.insert($0.fingerprint).inserted }
      context.include(order.dot)
      self.order = order
    } else {
      self.order = nil
    }
    self.groups = kept
    self.context = context
  }

  /// Every write this state and `other` hold, less what one removed after seeing it.
  func joined(with other: ReplicaState) -> ReplicaState {
    var groups: [Stamp: [PropertyListValue]] = [:]
    for (dot, parts) in self.groups {
      if let theirs = other.groups[dot] {
        // Both saw this write: a part stays where neither removed it. Both lists keep
        // the write's order, so the result does not depend on which side is `self`.
        // (Most often neither removed any: the lists are equal, and no set is built.
        // Compared element by element: `==` on arrays that share storage holds without
        // comparing, and a NaN part, equal to nothing, would then stay on one device only.)
        if theirs.count == parts.count, zip(theirs, parts).allSatisfy({ $0 == $1 }) {
          groups[dot] = parts
          continue
        }
        let held = Set(theirs)
        let kept = parts.filter(held.contains)
        // (A presence mark is empty on both sides; parts removed on both go.)
        if !kept.isEmpty || parts.isEmpty { groups[dot] = kept }
      } else if !other.context.includes(dot) {
        groups[dot] = parts
      }
    }
    for (dot, parts) in other.groups where self.groups[dot] == nil && !context.includes(dot) {
      groups[dot] = parts
    }
    var joined = self
    joined.groups = groups
    joined.context = context.joined(with: other.context)
    joined.order = ElementOrder.later(order, other.order)
    return joined
  }

  /// Whether every write `other` holds or has seen is in this state: joining it changes
  /// nothing.
  func includes(_ other: ReplicaState) -> Bool {
    joined(with: other) == self
  }

  /// The dots, oldest first.
  var dots: [Stamp] { groups.keys.sorted() }

  /// Every part, oldest write first, in the order each write added them.
  var parts: [(dot: Stamp, part: PropertyListValue)] {
    dots.flatMap { dot in (groups[dot] ?? []).map { (dot, $0) } }
  }

  /// Whether the state holds nothing, not even a presence mark, after writes: the key
  /// was deleted.
  var isDeleted: Bool { groups.isEmpty && !context.isEmpty }

  /// The number of parts held (an element added by two writes counts twice).
  var partCount: Int { groups.values.reduce(0) { $0 + $1.count } }

  /// One write's parts without repeats, in the order every device computes alike: a
  /// `.set`'s and a `.union`'s as its write added them (the order the writer's array
  /// gave them: a value replicated without a concurrent edit reads in the same order on
  /// every device); a packed set's ids ascending; the others' by fingerprint, then by
  /// description (two parts with one fingerprint are the same value to Zephyr). Each
  /// part's fingerprint is computed once, and ids already in order (as a packed blob
  /// decodes) are not sorted again.
  private static func canonical(_ parts: [PropertyListValue], kind: ReplicaKind) -> [PropertyListValue] {
    if kind.holdsElements { return unique(parts) }
    if kind == .packedSet, let ids = ids(ofParts: parts) {
      if zip(ids, ids.dropFirst()).allSatisfy({ $0 < $1 }) { return parts }
      return Array(Set(ids)).sorted().map { .unsignedInteger($0) }
    }
    return unique(parts).map { (key: $0.fingerprint.rawValue, part: $0) }
      .sorted { $0.key != $1.key ? $0.key < $1.key : $0.part.logDescription < $1.part.logDescription }
      .map(\.part)
  }

  /// The ids of a packed set's parts; `nil` when one part is not an id.
  private static func ids(ofParts parts: [PropertyListValue]) -> [UInt64]? {
    var ids: [UInt64] = []
    ids.reserveCapacity(parts.count)
    for part in parts {
      guard case .unsignedInteger(let id) = part else { return nil }
      ids.append(id)
    }
    return ids
  }

  /// `parts` without repeats, in order.
  private static func unique(_ parts: [PropertyListValue]) -> [PropertyListValue] {
    var seen = Set<PropertyListValue>()
    return parts.filter { seen.insert($0).inserted }
  }
}

/// What a replicated state's parts are, and how they make a value.
enum ReplicaKind: String, Sendable, Hashable, CaseIterable {
  /// Elements of an array taken as a set (`.set`).
  case set
  /// Integer ids of a ``PackedSet`` taken as a set (`.set` over a packed value): each
  /// write's ids are stored packed, so a history of 25,000 ids costs about what the ids do.
  case packedSet = "packed"
  /// Elements of an array, kept in the order they were first added (`.union`).
  case union
  /// Entries of a dictionary, each `[key, value]`; a key's latest write is its value.
  case dictionary
  /// Concurrent values, resolved to the largest.
  case max
  /// Concurrent values, resolved to the smallest.
  case min
  /// Concurrent values, resolved by the app's rule.
  case custom

  /// The kind a strategy merges by; `nil` for last-writer-wins.
  init?(_ strategy: MergeStrategy) {
    switch strategy {
    case .lastWriterWins: return nil
    case .set: self = .set
    case .union: self = .union
    case .dictionary: self = .dictionary
    case .max: self = .max
    case .min: self = .min
    case .custom: self = .custom
    }
  }

  /// The kind a strategy merges `value` by: a `.set` over packed ids (a ``PackedSet``,
  /// stored as `Data`) by ``packedSet``; `nil` for last-writer-wins.
  init?(_ strategy: MergeStrategy, value: PropertyListValue?) {
    guard let kind = ReplicaKind(strategy) else { return nil }
    if kind == .set, case .data? = value { self = .packedSet } else { self = kind }
  }

  /// Whether parts are the elements of an array.
  var holdsElements: Bool { self == .set || self == .union }

  /// Whether each write's part is a whole value (one per dot).
  var holdsSiblings: Bool { self == .max || self == .min || self == .custom }

  /// Whether `value` (or a delete) is of a kind this merges: arrays for `.set` and
  /// `.union`, dictionaries for `.dictionary`, anything for the others.
  func canMerge(_ value: PropertyListValue?) -> Bool {
    guard let value else { return true }
    switch self {
    case .set, .union: return value.arrayItems != nil
    case .packedSet: return value.packedIds != nil
    case .dictionary: return value.dictionaryEntries != nil
    case .max, .min, .custom: return true
    }
  }
}

extension PropertyListValue {
  /// An array's items; `nil` for another kind.
  var arrayItems: [PropertyListValue]? {
    if case .array(let items) = self { items } else { nil }
  }

  /// A dictionary's entries; `nil` for another kind.
  var dictionaryEntries: [String: PropertyListValue]? {
    if case .dictionary(let entries) = self { entries } else { nil }
  }

  /// A packed set's ids (see ``PackedIntegers``); `nil` for anything else.
  var packedIds: [UInt64]? {
    if case .data(let data) = self { PackedIntegers.decode(data) } else { nil }
  }

  /// A short name of the value's kind, for refusals.
  var kindName: String {
    switch self {
    case .string: "string"
    case .integer, .unsignedInteger: "integer"
    case .double: "double"
    case .bool: "bool"
    case .date: "date"
    case .data: "data"
    case .array: "array"
    case .dictionary: "dictionary"
    }
  }
}

/// A state's encoded fields, shared by the copies of a state that have not changed.
final class EncodedReplicaFields: Sendable {
  let fields: [PropertyListValue]

  init(fields: [PropertyListValue]) {
    self.fields = fields
  }
}

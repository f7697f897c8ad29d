import Foundation

/// The order of a `.set` or `.union` array's elements, as its latest reordering write gave
/// it: a last-writer-wins register over the element sequence, beside the state's parts.
///
/// The algebra:
/// - **Join**: the register of the later write stands, by ``Stamp`` order (generation,
///   then writer). A write made after seeing another has the higher generation (Lamport
///   numbering), so the order a device set after seeing another's replaces it; of two
///   concurrent orders, every device keeps the same one. Two registers of one write hold
///   one sequence; should they differ (a broken record), the one whose elements' fingerprints
///   compare lower stands. The join is a maximum over a total order: commutative,
///   associative and idempotent, and the state's join, a product of it and the parts'
///   join, stays one.
/// - **The value's order**: the register's elements that the state holds, in the
///   register's order, then the held elements it does not list, in the parts' order
///   (oldest write first, each write's elements in its writer's order). So additions made
///   concurrently with the order follow it, in the same order on every device.
/// - **An edit** sets the register (to the written array, at the edit's dot) only when the
///   value would not read in the written order without it: an edit that appends, the
///   common one, keeps the record as small as before.
///
/// Elements the state no longer holds stay in the register (dropping them would make the
/// result depend on when a device dropped them: an element added again later would take
/// another place); they are written in full only then, held ones as their position.
struct ElementOrder: Sendable, Hashable {
  /// The write that gave the order.
  var dot: Stamp
  /// The elements in the order written, each once (by fingerprint).
  var elements: [PropertyListValue]

  /// Of two registers, the one a join keeps.
  static func later(_ lhs: ElementOrder?, _ rhs: ElementOrder?) -> ElementOrder? {
    guard let lhs else { return rhs }
    guard let rhs else { return lhs }
    if lhs.dot != rhs.dot { return lhs.dot < rhs.dot ? rhs : lhs }
    if lhs.elements == rhs.elements { return lhs }
    let (mine, theirs) = (lhs.elements.map(\.fingerprint.rawValue), rhs.elements.map(\.fingerprint.rawValue))
    if mine != theirs { return mine.lexicographicallyPrecedes(theirs) ? lhs : rhs }
    let (mineDescribed, theirsDescribed) = (lhs.elements.map(\.logDescription), rhs.elements.map(\.logDescription))
    return mineDescribed.lexicographicallyPrecedes(theirsDescribed) ? lhs : rhs
  }

  /// `held` (elements, each once, in the parts' order) in this order: the listed ones
  /// first, as listed, then the others as they come.
  func arranging(_ held: [PropertyListValue]) -> [PropertyListValue] {
    let heldPrints = Dictionary(held.map { ($0.fingerprint, $0) }, uniquingKeysWith: { first, _ in first })
    var placed = Set<Fingerprint>()
    var arranged: [PropertyListValue] = []
    arranged.reserveCapacity(held.count)
    for element in elements {
      let print = element.fingerprint
      if let part = heldPrints[print], placed.insert(print).inserted { arranged.append(part) }
    }
    if arranged.count == held.count { return arranged }
    return arranged + held.filter { !placed.contains($0.fingerprint) }
  }

  /// The register as one field of a state's record (see ``ReplicaRecord``): the writer's
  /// index in `writers`, the generation, then the elements as varint positions in one
  /// `Data`: a held element's position in `parts` (the groups' parts as written, oldest
  /// write first), an element not held `parts.count` plus its index among the elements
  /// that follow, written in full.
  func encoded(writers: [String: Int], parts: [PropertyListValue]) -> PropertyListValue {
    var positions: [PropertyListValue: Int] = [:]
    for (position, part) in parts.enumerated() where positions[part] == nil { positions[part] = position }
    var numbers: [UInt64] = []
    numbers.reserveCapacity(elements.count)
    var unheld: [PropertyListValue] = []
    for element in elements {
      if let position = positions[element] {
        numbers.append(UInt64(position))
      } else {
        numbers.append(UInt64(parts.count + unheld.count))
        unheld.append(element)
      }
    }
    return .array(
      [.integer(Int64(writers[dot.origin] ?? 0)), .integer(Int64(dot.generation)), .data(Varint.encode(numbers))]
        + unheld)
  }

  /// Reads ``encoded(writers:parts:)``; `nil` when it is broken (a write the context lacks,
  /// a position past the elements).
  static func decode(
    _ field: PropertyListValue, origins: [String], context: VersionVector, parts: [PropertyListValue]
  ) -> ElementOrder? {
    guard case .array(let items) = field, items.count >= 3, case .integer(let index) = items[0], index >= 0,
      index < origins.count, case .integer(let generation) = items[1], generation >= 1,
      case .data(let blob) = items[2], let numbers = Varint.decode(blob)
    else { return nil }
    let dot = Stamp(generation: UInt64(generation), origin: origins[Int(index)])
    guard context.includes(dot) else { return nil }
    let unheld = items[3...]
    var elements: [PropertyListValue] = []
    elements.reserveCapacity(numbers.count)
    for number in numbers {
      if number < UInt64(parts.count) {
        elements.append(parts[Int(number)])
      } else {
        let extra = number - UInt64(parts.count)
        guard extra < UInt64(unheld.count) else { return nil }
        elements.append(unheld[unheld.startIndex + Int(extra)])
      }
    }
    return ElementOrder(dot: dot, elements: elements)
  }
}

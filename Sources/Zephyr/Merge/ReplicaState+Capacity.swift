import Foundation

extension ReplicaState {
  /// The state holding at most `capacity` elements: the newest, by write. Writes are
  /// taken newest first (by ``Stamp`` order: generation, then origin; a write made after
  /// seeing another has the higher generation), and within one write its parts from the
  /// last to the first in the state's canonical order (a packed set's larger ids first).
  /// An element held by several writes counts once, as of its newest.
  ///
  /// A trim is a removal by a device that saw every part it removes (each dot stays in
  /// the context), so the join makes it stick: a device that still holds a trimmed
  /// element cannot bring it back, and any device that trims a given state gets the same
  /// state. Presence marks stay. Only `.set` states (arrays or packed ids) are trimmed.
  func trimmed(toCapacity capacity: Int) -> ReplicaState {
    guard kind == .set || kind == .packedSet else { return self }
    // No more parts than the capacity: no more distinct elements either.
    guard groups.values.reduce(0, { $0 + $1.count }) > capacity else { return self }
    // A packed set's parts are its ids: counted as integers, they hash faster.
    if kind == .packedSet, let trimmed = trimmed(toCapacity: capacity, by: \.packedId) { return trimmed }
    return trimmed(toCapacity: capacity, by: { Optional($0) }) ?? self
  }

  /// The trim, each part counted as `element(part)`; `nil` when a part has none.
  private func trimmed<Element: Hashable>(
    toCapacity capacity: Int, by element: (PropertyListValue) -> Element?
  ) -> ReplicaState? {
    var kept = Set<Element>()
    var trimmedGroups: [Stamp: [PropertyListValue]] = [:]
    var removedAny = false
    for dot in dots.reversed() {
      let parts = groups[dot] ?? []
      var keptParts: [PropertyListValue] = []
      for part in parts.reversed() {
        guard let counted = element(part) else { return nil }
        if kept.contains(counted) || kept.count < capacity {
          kept.insert(counted)
          keptParts.append(part)
        } else {
          removedAny = true
        }
      }
      if !keptParts.isEmpty || parts.isEmpty { trimmedGroups[dot] = keptParts.reversed() }
    }
    guard removedAny else { return self }
    return ReplicaState(kind: kind, groups: trimmedGroups, context: context, order: order)
  }
}

extension PropertyListValue {
  /// A packed set's part as its id; `nil` for any other value.
  fileprivate var packedId: UInt64? {
    if case .unsignedInteger(let id) = self { id } else { nil }
  }
}

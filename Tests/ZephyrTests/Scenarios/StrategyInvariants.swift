import Foundation

@testable import Zephyr

/// The invariants of keys merged by a strategy, checked on their converged final state.
///
/// - `.set`: no element added on any device is lost unless a device that held it removed
///   it, and no element comes back that a device removed after seeing every addition of
///   it (a removal "sticks");
/// - `.union`: no element is lost unless a device that held it removed it (a removal may
///   be undone by a device that still holds the element); for both, a write that
///   followed every other write of the key (no concurrent edit) is the final value, in
///   its writer's order;
/// - `.dictionary`: per entry, the final state (a value or absent) is a change of that
///   entry that no other change of it causally follows;
/// - `.max`, `.min`: the final value is legitimate like any write, and no smaller (larger)
///   than any write no other write follows;
/// - `.custom`: legitimate like any write.
///
/// What a write added or removed is read against its writer's local value just before
/// it (``TrackedWrite/prior``). Writes are ordered by what their writers saw of this key
/// (``TrackedWrite/keyClock``): a strategy decides between changes of one key that
/// neither side had seen, whatever else either had seen. Writes that may not overwrite (``TrackedWrite/overwrites``)
/// may lose what they added, and their removals may be undone.
extension CausalHistory {
  func violations(key: String, final: PropertyListValue?, strategy: ScenarioStrategy) -> [Violation] {
    switch strategy {
    case .set: elementViolations(key: key, final: final, removalsStick: true)
    case .union: elementViolations(key: key, final: final, removalsStick: false)
    case .dictionary: entryViolations(key: key, final: final)
    case .max, .min:
      violations(key: key, final: final, perKey: true)
        + extremeViolations(key: key, final: final, largest: strategy == .max)
    case .custom: violations(key: key, final: final, perKey: true)
    }
  }

  private func elementViolations(key: String, final: PropertyListValue?, removalsStick: Bool) -> [Violation] {
    var adds: [PropertyListValue: [TrackedWrite]] = [:]
    var removals: [PropertyListValue: [TrackedWrite]] = [:]
    for write in writesByKey[key] ?? [] {
      let before = Set(ScenarioStrategy.items(write.prior))
      let after = Set(ScenarioStrategy.items(write.value))
      for element in after.subtracting(before) { adds[element, default: []].append(write) }
      for element in before.subtracting(after) { removals[element, default: []].append(write) }
    }
    let held = ScenarioStrategy.items(final)
    var found: [Violation] = []
    if Set(held).count != held.count {
      found.append(Violation(kind: .inventedValue, key: key, message: "\(key) holds an element twice: \(held)"))
    }
    for element in held where adds[element] == nil {
      found.append(
        Violation(kind: .inventedValue, key: key, message: "\(key) holds \(element.logDescription), which nobody added")
      )
    }
    for (element, added) in adds where !held.contains(element) {
      let armed = added.filter(\.overwrites)
      guard let first = armed.first else { continue }
      let standing = (removals[element] ?? []).filter { removal in
        !armed.contains { removal.keyClock.precedes($0.keyClock) }
      }
      guard standing.isEmpty else { continue }
      let why =
        removals[element].map { "every removal (\($0.map(\.id))) was followed by an addition" }
        ?? "no device that held it removed it"
      found.append(
        Violation(
          kind: .legitimacy, key: key, message: "\(key) lost \(element.logDescription), added by \(first): \(why)"))
    }
    // A value replicated without a concurrent edit reads in its writer's order. (Every
    // device reading the same order is the agreement check's: it compares arrays.)
    let writes = writesByKey[key] ?? []
    if let last = writes.last, last.overwrites,
      writes.allSatisfy({ $0.id == last.id || $0.keyClock.precedes(last.keyClock) })
    {
      var seen = Set<PropertyListValue>()
      let written = ScenarioStrategy.items(last.value).filter { seen.insert($0).inserted }
      // (What it holds is the other checks' concern: this one looks at the order alone.)
      if Set(held) == Set(written), held != written {
        found.append(
          Violation(
            kind: .order, key: key,
            message: "\(key) holds \(held.map(\.logDescription)) after \(last), which followed every other write "
              + "and wrote \(written.map(\.logDescription))"))
      }
    }
    guard removalsStick else { return found }
    for element in held {
      guard let added = adds[element] else { continue }
      let armed = (removals[element] ?? []).filter(\.overwrites)
      let standing = added.filter { add in !armed.contains { add.keyClock.precedes($0.keyClock) } }
      if standing.isEmpty, let removal = armed.first {
        found.append(
          Violation(
            kind: .resurrection, key: key,
            message: "\(key) holds \(element.logDescription) after \(removal), which followed every addition of it"))
      }
    }
    return found
  }

  private func entryViolations(key: String, final: PropertyListValue?) -> [Violation] {
    var changes: [String: [(write: TrackedWrite, entry: PropertyListValue?)]] = [:]
    for write in writesByKey[key] ?? [] {
      let before = ScenarioStrategy.entries(write.prior)
      let after = ScenarioStrategy.entries(write.value)
      for name in Set(before.keys).union(after.keys) where before[name] != after[name] {
        changes[name, default: []].append((write, after[name]))
      }
    }
    let held = ScenarioStrategy.entries(final)
    var found: [Violation] = []
    for name in Set(held.keys).union(changes.keys).sorted() {
      let changed = changes[name] ?? []
      let armed = changed.filter(\.write.overwrites)
      func overwriter(of write: TrackedWrite) -> TrackedWrite? {
        armed.first { write.keyClock.precedes($0.write.keyClock) }?.write
      }
      if let entry = held[name] {
        // (Several changes may set the same value: an upload after an account change
        // sets again what the device held. The entry is legitimate while one of them is.)
        let sources = changed.filter { $0.entry == entry }
        guard let source = sources.first else {
          found.append(
            Violation(
              kind: .inventedValue, key: key,
              message: "\(key)[\(name)] holds \(entry.logDescription), which nobody wrote"))
          continue
        }
        if sources.allSatisfy({ overwriter(of: $0.write) != nil }), let later = overwriter(of: source.write) {
          found.append(
            Violation(
              kind: .legitimacy, key: key,
              message: "\(key)[\(name)] holds \(entry.logDescription) of \(source.write), overwritten by \(later)"))
        }
      } else if !armed.isEmpty {
        let removals = changed.filter { $0.entry == nil }
        guard removals.allSatisfy({ overwriter(of: $0.write) != nil }) else { continue }
        let why = removals.isEmpty ? "nobody removed it" : "every removal was overwritten"
        found.append(
          Violation(
            kind: .legitimacy, key: key, message: "\(key)[\(name)] is absent, but \(why): \(changed.map(\.write.id))"))
      }
    }
    return found
  }

  private func extremeViolations(key: String, final: PropertyListValue?, largest: Bool) -> [Violation] {
    guard case .integer(let value)? = final else { return [] }
    // Any later write of the key supersedes a value, armed or not (an unarmed one may be
    // lost, never bring back what it superseded); only armed writes bound the result.
    let all = writesByKey[key] ?? []
    let frontier = all.filter { write in write.overwrites && !all.contains { write.keyClock.precedes($0.keyClock) } }
    guard !frontier.contains(where: \.isDelete) else { return [] }
    let numbers = frontier.compactMap { write -> Int64? in
      if case .integer(let number)? = write.value { number } else { nil }
    }
    guard let bound = largest ? numbers.max() : numbers.min(), largest ? value < bound : value > bound else {
      return []
    }
    return [
      Violation(
        kind: .legitimacy, key: key,
        message:
          "\(key) holds \(value), \(largest ? "below" : "above") \(bound) of a write no write follows: \(frontier)")
    ]
  }
}

import Foundation

/// What a three-way merge needs to remember of a key beyond the agreed fingerprint: the
/// agreed value itself, and the base, the last state from elsewhere that this device's
/// agreed state was made from. Kept only for keys merged by ``MergeStrategy/set`` or
/// ``MergeStrategy/dictionary``.
///
/// A write that follows the agreed state (its record's base is the agreed stamp) is merged
/// against the agreed value; any other write against the base: it was made without this
/// device's own writes since the base.
struct MergeMemory: Sendable, Equatable {
  /// The agreed value; `nil` when the agreed state is a delete.
  var agreed: PropertyListValue?
  /// The stamp of the base, when known.
  var base: Stamp?
  /// The base's value; `nil` for a delete or when unknown.
  var baseValue: PropertyListValue?
  /// This device's own agreed states since the base, oldest first (at most
  /// ``maximumOwnStates``): a write made from one of them is merged against it.
  var ownStates: [OwnState] = []

  /// One of this device's agreed states since the base.
  struct OwnState: Sendable, Equatable {
    var stamp: Stamp
    var value: PropertyListValue?
  }

  static let maximumOwnStates = 16

  /// The value to merge a write made from `base` against: the agreed value when it was
  /// made from the agreed state, the value of one of this device's own states since the
  /// base when it was made from that, else the base's (the common ancestor of this
  /// device's writes and any write made without them).
  func ancestor(of base: Stamp?, agreedStamp: Stamp) -> PropertyListValue? {
    if base == agreedStamp { return agreed }
    if let own = ownStates.last(where: { $0.stamp == base }) { return own.value }
    return baseValue
  }
}

extension LedgerCodec {
  /// Appends a memory: a marker, the agreed value, then the base.
  static func appendMemory(_ memory: MergeMemory, to bytes: inout [UInt8]) {
    bytes.append(1)
    appendValue(memory.agreed, to: &bytes)
    if let base = memory.base {
      bytes.append(1)
      appendWord(base.generation, to: &bytes)
      appendString(base.origin, to: &bytes)
    } else {
      bytes.append(0)
    }
    appendValue(memory.baseValue, to: &bytes)
    appendWord(UInt64(memory.ownStates.count), to: &bytes)
    for own in memory.ownStates {
      appendWord(own.stamp.generation, to: &bytes)
      appendString(own.stamp.origin, to: &bytes)
      appendValue(own.value, to: &bytes)
    }
  }

  /// A value as a one-element binary property list (a top-level scalar is not portable),
  /// or a 0 marker for none.
  private static func appendValue(_ value: PropertyListValue?, to bytes: inout [UInt8]) {
    guard let value,
      let data = try? PropertyListSerialization.data(
        fromPropertyList: [value.foundationValue], format: .binary, options: 0)
    else {
      bytes.append(0)
      return
    }
    bytes.append(1)
    appendWord(UInt64(data.count), to: &bytes)
    bytes += [UInt8](data)
  }
}

extension ByteReader {
  /// A memory written by ``LedgerCodec/appendMemory(_:to:)``.
  mutating func memory() throws(LedgerError) -> MergeMemory {
    guard try byte() == 1 else { throw LedgerError.corrupt("unknown memory kind") }
    var memory = MergeMemory(agreed: try value())
    if try byte() == 1 {
      let generation = try word()
      memory.base = Stamp(generation: generation, origin: try string())
    }
    memory.baseValue = try value()
    let count = try word()
    guard count <= UInt64(MergeMemory.maximumOwnStates) else { throw LedgerError.corrupt("too many own states") }
    for _ in 0..<count {
      let generation = try word()
      let stamp = Stamp(generation: generation, origin: try string())
      memory.ownStates.append(MergeMemory.OwnState(stamp: stamp, value: try value()))
    }
    return memory
  }

  private mutating func value() throws(LedgerError) -> PropertyListValue? {
    guard try byte() == 1 else { return nil }
    let length = try word()
    guard length <= UInt64(bytes.count - position) else { throw LedgerError.corrupt("truncated value") }
    let data = Data(bytes[position..<(position + Int(length))])
    position += Int(length)
    guard
      let decoded = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
      case .array(let items)? = PropertyListValue(bridging: decoded), items.count == 1
    else {
      throw LedgerError.corrupt("unreadable value")
    }
    return items[0]
  }
}

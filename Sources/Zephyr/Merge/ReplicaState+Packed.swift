import Foundation

/// How a packed set's state is written in its record and in the ledger: the ids once,
/// and which writes hold them, instead of one packed blob per write.
///
/// A history of 25,000 ids marked 25 at a time on three devices is 1,000 writes; packing
/// each write's ids apart cost 24 more bits an id (the gaps between a few ids spread over
/// 2³² are large) plus a header per write, 124 KB in all. Written once, the ids cost what
/// their gaps cost (about 19 bits each), and each id's write costs `⌈log₂ writes⌉` bits.
///
/// The groups are the writes only: per write, oldest first, the writer's index and how far
/// its generation rises above the write before it, as varint pairs in one `Data` (two or
/// three bytes a write, where a list of `[writer, generation]` pairs cost eighteen in a
/// binary property list). Three fields follow them:
/// 1. every id any write holds, ascending, packed (``PackedIntegers``);
/// 2. per id, in that order, the index (into the groups' list) of the oldest write that
///    holds it, in `⌈log₂ groups⌉` bits each, zero-padded to a byte;
/// 3. the rare others: an id held by several writes (added on two devices at once), as
///    varint pairs (position of the id, index of the write), in ascending order.
///
/// A group that holds no id is a presence mark (an empty set written), as before.
enum PackedMembership {
  /// The writes the groups field holds (``ReplicaState/computedFields``): each writer's
  /// index and generation; `nil` when it is not varint pairs, or a generation passes
  /// ``Generation/maximum``. (The state's decoding checks the rest.)
  static func writes(_ blob: Data) -> [(index: UInt64, generation: UInt64)]? {
    guard let numbers = Varint.decode(blob), numbers.count.isMultiple(of: 2) else { return nil }
    var writes: [(index: UInt64, generation: UInt64)] = []
    writes.reserveCapacity(numbers.count / 2)
    var generation: UInt64 = 0
    for pair in stride(from: 0, to: numbers.count, by: 2) {
      guard numbers[pair + 1] <= Generation.maximum - generation else { return nil }
      generation += numbers[pair + 1]
      writes.append((numbers[pair], generation))
    }
    return writes
  }

  /// The three fields for `groups`, whose dots are `dots` in that order.
  static func encode(dots: [Stamp], groups: [Stamp: [PropertyListValue]]) -> [PropertyListValue] {
    // Every (id, write) pair, by id then write: one sort, no per-id allocation.
    var pairs: [(id: UInt64, index: Int)] = []
    pairs.reserveCapacity(groups.values.reduce(0) { $0 + $1.count })
    for (index, dot) in dots.enumerated() {
      for case .unsignedInteger(let id) in groups[dot] ?? [] { pairs.append((id, index)) }
    }
    pairs.sort { $0.id != $1.id ? $0.id < $1.id : $0.index < $1.index }
    let width = bitWidth(of: dots.count)
    var ids: [UInt64] = []
    ids.reserveCapacity(pairs.count)
    var writer = BitWriter(bytes: [])
    writer.reserve(bits: pairs.count * width)
    var extras: [UInt64] = []
    for pair in pairs {
      if ids.last == pair.id {
        extras += [UInt64(ids.count - 1), UInt64(pair.index)]
      } else {
        ids.append(pair.id)
        writer.write(UInt64(pair.index), bits: width)
      }
    }
    return [.data(PackedIntegers.encode(ids)), .data(Data(writer.finish())), .data(Varint.encode(extras))]
  }

  /// The parts of each group (by index) the three fields give to `groupCount` groups; a
  /// reason when they are inconsistent.
  static func decode(_ fields: ArraySlice<PropertyListValue>, groupCount: Int) -> Result<
    [[UInt64]], ReplicaDecodingError
  > {
    func broken(_ reason: String) -> Result<[[UInt64]], ReplicaDecodingError> {
      .failure(ReplicaDecodingError(reason: "packed state \(reason)"))
    }
    let fields = Array(fields)
    guard fields.count == 3, case .data(let idBlob) = fields[0], case .data(let indexBlob) = fields[1],
      case .data(let extraBlob) = fields[2]
    else { return broken("lacks its ids, their writes or the extra writes") }
    guard let ids = PackedIntegers.decode(idBlob) else { return broken("ids are not packed ids") }
    let width = bitWidth(of: groupCount)
    guard indexBlob.count == (ids.count * width + 7) / 8 else { return broken("writes do not match the ids") }
    guard ids.isEmpty || groupCount > 0 else { return broken("ids belong to no write") }
    var members = [[UInt64]](repeating: [], count: groupCount)
    var reader = BitReader(bytes: [UInt8](indexBlob), bitPosition: 0)
    for id in ids {
      guard let index = reader.read(bits: width), index < groupCount else { return broken("names a write it lacks") }
      members[Int(index)].append(id)
    }
    guard reader.isAtZeroPaddedEnd, let extras = Varint.decode(extraBlob), extras.count.isMultiple(of: 2) else {
      return broken("extra writes are not pairs")
    }
    var previous: (UInt64, UInt64)?
    for pair in stride(from: 0, to: extras.count, by: 2) {
      let (position, index) = (extras[pair], extras[pair + 1])
      guard position < ids.count, index < groupCount, previous.map({ $0 < (position, index) }) ?? true else {
        return broken("extra writes are out of order or out of range")
      }
      previous = (position, index)
      let id = ids[Int(position)]
      // (Sorted insertion keeps each group ascending; a repeat is refused.)
      guard let slot = insertionSlot(of: id, in: members[Int(index)]) else { return broken("repeats an id") }
      members[Int(index)].insert(id, at: slot)
    }
    return .success(members)
  }

  /// Bits per write index: enough for `count - 1`; 0 for one write or none.
  private static func bitWidth(of count: Int) -> Int {
    count <= 1 ? 0 : UInt64.bitWidth - UInt64(count - 1).leadingZeroBitCount
  }

  /// Where `id` goes in the ascending `list`; `nil` when the list holds it.
  private static func insertionSlot(of id: UInt64, in list: [UInt64]) -> Int? {
    var (low, high) = (0, list.count)
    while low < high {
      let middle = (low + high) / 2
      if list[middle] < id { low = middle + 1 } else { high = middle }
    }
    return low < list.count && list[low] == id ? nil : low
  }
}

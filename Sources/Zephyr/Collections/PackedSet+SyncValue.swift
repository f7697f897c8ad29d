import Foundation

extension PackedSet: SyncValue {
  /// The set a packed blob holds; `nil` for anything else: a blob that is truncated, has
  /// trailing bytes or a wrong header, holds a value that does not fit `Element`, or is
  /// not `Data` at all (a plain array of numbers written by older code is not read as a
  /// packed set). Decodes and checks the whole blob once, O(n).
  ///
  /// ```swift
  /// PackedSet<UInt32>(propertyList: .data(blob))     // the set, or nil
  /// PackedSet<UInt32>(propertyList: .array([.integer(1)]))   // nil
  /// ```
  public init?(propertyList: PropertyListValue) {
    guard case .data(let blob) = propertyList, let keys = PackedIntegers.decode(blob) else { return nil }
    var elements: [Element] = []
    elements.reserveCapacity(keys.count)
    for key in keys {
      guard let element = Self.element(forKey: key) else { return nil }
      elements.append(element)
    }
    self.init(ascending: elements, blob: blob)
  }

  /// `.data` of the packed blob: the blob the set was read from while it is unchanged,
  /// else the elements encoded, O(n). Throws `EncodingError.invalidValue` only for an
  /// element wider than 64 bits (an `Int128` beyond `Int64`'s range).
  public var propertyList: PropertyListValue? {
    get throws {
      if let blob { return .data(blob) }
      guard let keys = packedKeys else {
        throw EncodingError.invalidValue(
          self, EncodingError.Context(codingPath: [], debugDescription: "a PackedSet element does not fit 64 bits"))
      }
      return .data(PackedIntegers.encode(keys))
    }
  }
}

extension PackedSet {
  /// The set of the elements that ascending keys stand for (see ``packedKeys``); `nil`
  /// when a key names no `Element` (70,000 in a `PackedSet<UInt16>`). For the merge layer,
  /// which merges keys of any element type alike.
  init?(packedKeys keys: [UInt64]) {
    var elements: [Element] = []
    elements.reserveCapacity(keys.count)
    for key in keys {
      guard let element = Self.element(forKey: key) else { return nil }
      elements.append(element)
    }
    guard zip(elements, elements.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
    self.init(ascending: elements)
  }

  /// The elements as unsigned keys in the same (ascending) order: unsigned elements as
  /// they are, signed ones with the sign bit flipped (`Int64.min` is 0, `-1` is
  /// `2^63 - 1`, `0` is `2^63`). `nil` when an element does not fit 64 bits.
  var packedKeys: [UInt64]? {
    var keys: [UInt64] = []
    keys.reserveCapacity(elements.count)
    for element in elements {
      guard let key = Self.key(for: element) else { return nil }
      keys.append(key)
    }
    return keys
  }

  /// The order-preserving unsigned key of `element`.
  static func key(for element: Element) -> UInt64? {
    if Element.isSigned {
      guard let signed = Int64(exactly: element) else { return nil }
      return UInt64(bitPattern: signed) ^ (1 << 63)
    }
    return UInt64(exactly: element)
  }

  /// The element whose key is `key`, if `Element` can hold it.
  static func element(forKey key: UInt64) -> Element? {
    Element.isSigned ? Element(exactly: Int64(bitPattern: key ^ (1 << 63))) : Element(exactly: key)
  }
}

/// A value that decoding its stored form gives back equal, so a typed read may return the
/// value that was written instead of decoding the blob again. (`Codable` values need
/// not: a lossy `encode(to:)` reads back different.)
protocol ExactlyStored {}

extension PackedSet: ExactlyStored {}

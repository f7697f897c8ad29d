import Foundation

/// Encodes an `Encodable` value straight into a ``PropertyListValue``, with the choices
/// `PropertyListEncoder` makes (so a value encodes alike whichever a device used): a
/// keyed container is a dictionary of its keys' string values, an unkeyed one an array,
/// `nil` the string `"$null"`, `Date` and `Data` themselves, every integer an integer
/// (an unsigned one above `Int64.max` unsigned), `Float` a double, and a value that
/// encodes nothing an empty dictionary. Without the round trip through a binary property
/// list and `PropertyListSerialization` that `PropertyListEncoder` needs to give a
/// property list back, which bridged every field through Foundation's `Any`.
enum PropertyListValueEncoder {
  /// The string `PropertyListEncoder` writes for `nil`.
  static let null = "$null"

  static func encode(_ value: some Encodable) throws -> PropertyListValue {
    let node = EncodingNode()
    try node.encode(value, at: [])
    return node.value
  }
}

/// One value being encoded: a scalar, or a container its children are added to.
private final class EncodingNode {
  enum Content {
    case empty
    case scalar(PropertyListValue)
    case array([EncodingNode])
    case dictionary([String: EncodingNode])
  }

  var content = Content.empty

  /// The finished value (a value that encoded nothing: an empty dictionary).
  var value: PropertyListValue {
    switch content {
    case .empty: .dictionary([:])
    case .scalar(let value): value
    case .array(let nodes): .array(nodes.map(\.value))
    case .dictionary(let nodes): .dictionary(nodes.mapValues(\.value))
    }
  }

  /// Encodes `value` into this node: `Date` and `Data` as themselves, anything else by
  /// its own `encode(to:)`.
  func encode(_ value: some Encodable, at path: [any CodingKey]) throws {
    switch value {
    case let date as Date: content = .scalar(.date(date))
    case let data as Data: content = .scalar(.data(data))
    default: try value.encode(to: NodeEncoder(node: self, codingPath: path))
    }
  }

  /// A child added under `key` (replacing one already there).
  func child(forKey key: String) -> EncodingNode {
    let node = EncodingNode()
    guard case .dictionary(var nodes) = content else {
      content = .dictionary([key: node])
      return node
    }
    content = .empty  // (`nodes` is then the only reference: updated in place.)
    nodes[key] = node
    content = .dictionary(nodes)
    return node
  }

  /// The child under `key` when there is one, else a new one: a container asked for
  /// twice under one key is one container, as `PropertyListEncoder` makes it.
  func existingChild(forKey key: String) -> EncodingNode {
    if case .dictionary(let nodes) = content, let node = nodes[key] { return node }
    return child(forKey: key)
  }

  /// A child appended to this array.
  func appendedChild() -> EncodingNode {
    let node = EncodingNode()
    guard case .array(var nodes) = content else {
      content = .array([node])
      return node
    }
    content = .empty
    nodes.append(node)
    content = .array(nodes)
    return node
  }

  /// Makes this node a dictionary (keeping its entries) or an array, as a container asks.
  func become(dictionary: Bool) {
    switch (content, dictionary) {
    case (.dictionary, true), (.array, false): break
    case (_, true): content = .dictionary([:])
    case (_, false): content = .array([])
    }
  }

  static func scalar(_ value: some BinaryInteger) -> PropertyListValue {
    if let signed = Int64(exactly: value) { return .integer(signed) }
    return .unsignedInteger(UInt64(truncatingIfNeeded: value))
  }
}

private struct NodeEncoder: Encoder {
  let node: EncodingNode
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    node.become(dictionary: true)
    return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    node.become(dictionary: false)
    return UnkeyedNodeContainer(node: node, codingPath: codingPath)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    SingleNodeContainer(node: node, codingPath: codingPath)
  }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let node: EncodingNode
  let codingPath: [any CodingKey]

  private func child(_ key: Key) -> EncodingNode { node.child(forKey: key.stringValue) }
  private func put(_ value: PropertyListValue, _ key: Key) { child(key).content = .scalar(value) }
  private func put(_ value: some BinaryInteger, _ key: Key) { put(EncodingNode.scalar(value), key) }

  mutating func encodeNil(forKey key: Key) throws { put(.string(PropertyListValueEncoder.null), key) }
  mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
  mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
  mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
  mutating func encode(_ value: Float, forKey key: Key) throws { put(.double(Double(value)), key) }
  mutating func encode(_ value: Int, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { put(value, key) }
  mutating func encode(_ value: some Encodable, forKey key: Key) throws {
    try child(key).encode(value, at: codingPath + [key])
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = node.existingChild(forKey: key.stringValue)
    nested.become(dictionary: true)
    return KeyedEncodingContainer(KeyedNodeContainer<NestedKey>(node: nested, codingPath: codingPath + [key]))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let nested = node.existingChild(forKey: key.stringValue)
    nested.become(dictionary: false)
    return UnkeyedNodeContainer(node: nested, codingPath: codingPath + [key])
  }

  mutating func superEncoder() -> any Encoder {
    NodeEncoder(node: node.existingChild(forKey: "super"), codingPath: codingPath + [SuperKey.key])
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    NodeEncoder(node: node.existingChild(forKey: key.stringValue), codingPath: codingPath + [key])
  }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
  let node: EncodingNode
  let codingPath: [any CodingKey]

  var count: Int {
    if case .array(let nodes) = node.content { nodes.count } else { 0 }
  }

  private func next() -> EncodingNode { node.appendedChild() }

  mutating func encodeNil() throws { next().content = .scalar(.string(PropertyListValueEncoder.null)) }
  mutating func encode(_ value: Bool) throws { next().content = .scalar(.bool(value)) }
  mutating func encode(_ value: String) throws { next().content = .scalar(.string(value)) }
  mutating func encode(_ value: Double) throws { next().content = .scalar(.double(value)) }
  mutating func encode(_ value: Float) throws { next().content = .scalar(.double(Double(value))) }
  mutating func encode(_ value: Int) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: Int8) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: Int16) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: Int32) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: Int64) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt8) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt16) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt32) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt64) throws { next().content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: some Encodable) throws {
    let path = codingPath + [SuperKey(index: count)]
    try next().encode(value, at: path)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
    NestedKey
  > {
    let path = codingPath + [SuperKey(index: count)]
    let nested = next()
    nested.become(dictionary: true)
    return KeyedEncodingContainer(KeyedNodeContainer<NestedKey>(node: nested, codingPath: path))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let path = codingPath + [SuperKey(index: count)]
    let nested = next()
    nested.become(dictionary: false)
    return UnkeyedNodeContainer(node: nested, codingPath: path)
  }

  mutating func superEncoder() -> any Encoder {
    let path = codingPath + [SuperKey(index: count)]
    return NodeEncoder(node: next(), codingPath: path)
  }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
  let node: EncodingNode
  let codingPath: [any CodingKey]

  mutating func encodeNil() throws { node.content = .scalar(.string(PropertyListValueEncoder.null)) }
  mutating func encode(_ value: Bool) throws { node.content = .scalar(.bool(value)) }
  mutating func encode(_ value: String) throws { node.content = .scalar(.string(value)) }
  mutating func encode(_ value: Double) throws { node.content = .scalar(.double(value)) }
  mutating func encode(_ value: Float) throws { node.content = .scalar(.double(Double(value))) }
  mutating func encode(_ value: Int) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: Int8) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: Int16) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: Int32) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: Int64) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt8) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt16) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt32) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: UInt64) throws { node.content = .scalar(EncodingNode.scalar(value)) }
  mutating func encode(_ value: some Encodable) throws { try node.encode(value, at: codingPath) }
}

/// The coding key of `super`, and of an array's element in a coding path.
struct SuperKey: CodingKey {
  static let key = SuperKey(stringValue: "super")

  var stringValue: String
  var intValue: Int?

  init(stringValue: String) {
    self.stringValue = stringValue
  }

  init(intValue: Int) {
    stringValue = "Index \(intValue)"
    self.intValue = intValue
  }

  init(index: Int) {
    self.init(intValue: index)
  }
}

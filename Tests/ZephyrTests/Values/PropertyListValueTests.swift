import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Every property-list case survives `UserDefaults`, the store and a restart unchanged.
struct PropertyListValueTests {
  static let samples: [(String, PropertyListValue)] = [
    ("string", .string("dusk ☾")),
    ("empty string", .string("")),
    ("integer", .integer(-42)),
    ("large integer", .integer(Int64.max)),
    ("unsigned above Int64.max", .unsignedInteger(UInt64.max)),
    ("double", .double(3.25)),
    ("whole double", .double(1.0)),
    ("bool true", .bool(true)),
    ("bool false", .bool(false)),
    ("date", .date(Date(timeIntervalSince1970: 1_700_000_000.789))),
    ("data", .data(Data([0, 1, 2, 255]))),
    ("empty array", .array([])),
    ("array", .array([.integer(1), .string("a"), .bool(true), .array([.double(0.5)])])),
    ("dictionary", .dictionary(["a": .integer(1), "b": .dictionary(["c": .data(Data([9]))])])),
  ]

  @Test(arguments: samples.map(\.0))
  func roundTripsThroughUserDefaultsAndTheStore(_ name: String) throws {
    let value = try #require(Self.samples.first { $0.0 == name }?.1)
    let harness = Harness()
    let a = harness.device("A", monitored: ["value"])
    let b = harness.device("B", monitored: ["value"])
    a.set(value, "value")
    // Exactly, or (on Linux, once Foundation re-read its plist file, which the coordinator's
    // own reads may trigger) as it persists: dates to the whole second.
    #expect(
      a.value("value").map { $0 == value || $0.isSameValue(as: value) } == true, "UserDefaults hands back the value")

    a.coordinator.sync()
    harness.cloud.deliver()
    #expect(b.value("value").map { $0.isSameValue(as: value) } == true)
    #expect(b.record("value")?.content == .value(value), "the store holds the value exactly")

    // A restart reads the value back as the platform persisted it: not a local edit.
    let persisted = try Self.persistedForm(of: value)
    #expect(persisted.fingerprint == value.fingerprint)
    b.set(persisted, "value")
    b.restart()
    let writes = b.store.statistics.writes
    b.coordinator.sync()
    #expect(b.store.statistics.writes == writes)
  }

  /// The value as swift-corelibs-foundation writes and reads defaults: an XML plist.
  static func persistedForm(of value: PropertyListValue) throws -> PropertyListValue {
    let xml = try PropertyListSerialization.data(
      fromPropertyList: ["value": value.foundationValue], format: .xml, options: 0)
    let decoded = try PropertyListSerialization.propertyList(from: xml, format: nil)
    let dictionary = try #require(PropertyListValue(bridging: decoded))
    guard case .dictionary(let entries) = dictionary, let read = entries["value"] else {
      throw CocoaError(.propertyListReadCorrupt)
    }
    return read
  }

  @Test func datesFingerprintToWholeSeconds() {
    let precise = PropertyListValue.date(Date(timeIntervalSince1970: 5.789))
    #expect(precise.fingerprint == PropertyListValue.date(Date(timeIntervalSince1970: 5)).fingerprint)
    #expect(precise.fingerprint != PropertyListValue.date(Date(timeIntervalSince1970: 6)).fingerprint)
    #expect(
      PropertyListValue.date(Date(timeIntervalSince1970: -5.789)).fingerprint
        == PropertyListValue.date(Date(timeIntervalSince1970: -6)).fingerprint)
  }

  @Test func typesAreDistinct() {
    let values: [PropertyListValue] = [
      .integer(1), .double(1), .bool(true), .string("1"), .data(Data([1])), .array([.integer(1)]),
      .dictionary(["1": .integer(1)]),
    ]
    #expect(Set(values.map(\.fingerprint)).count == values.count)
  }

  @Test func bridgesOptionalBoxesAndFoundationTypes() {
    let boxed: Any = [
      Optional<Any>.some(1), Optional<Any>.some(["a": Optional<Any>.some(true)] as [AnyHashable: Any?]),
    ]
    #expect(PropertyListValue(bridging: boxed) == .array([.integer(1), .dictionary(["a": .bool(true)])]))
    #expect(PropertyListValue(bridging: NSNumber(value: true)) == .bool(true))
    #expect(PropertyListValue(bridging: NSNumber(value: 2.5)) == .double(2.5))
    #expect(PropertyListValue(bridging: NSNumber(value: UInt64.max)) == .unsignedInteger(UInt64.max))
    #expect(PropertyListValue(bridging: NSNumber(value: Int32(7))) == .integer(7))
    #expect(PropertyListValue(bridging: Optional<Any>.none as Any) == nil)
    #expect(PropertyListValue(bridging: [1: "not a string key"]) == nil)
    #expect(PropertyListValue(bridging: NSObject()) == nil)
  }
}

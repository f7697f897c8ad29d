import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// Fingerprints tell distinct values apart, stay put for values already in ledgers, and
/// survive a trip through `UserDefaults`.
struct FingerprintTests {
  /// Integers whose 64 bits agree but whose values do not.
  static let integerPairs: [(PropertyListValue, PropertyListValue)] = [
    (.integer(-1), .unsignedInteger(UInt64.max)),
    (.integer(Int64.min), .unsignedInteger(UInt64(1) << 63)),
    (.integer(Int64.min + 1), .unsignedInteger((UInt64(1) << 63) + 1)),
    (.array([.integer(-1)]), .array([.unsignedInteger(UInt64.max)])),
    (.dictionary(["n": .integer(-1)]), .dictionary(["n": .unsignedInteger(UInt64.max)])),
  ]

  @Test func integersWithTheSameBitsDiffer() {
    for (signed, unsigned) in Self.integerPairs {
      #expect(signed.fingerprint != unsigned.fingerprint, "\(signed) vs \(unsigned)")
      #expect(!signed.isSameValue(as: unsigned))
    }
  }

  /// An `unsignedInteger` at or below `Int64.max` breaks the enum's rule, but persists as
  /// the integer it equals, so it fingerprints as that integer.
  @Test func smallUnsignedIntegerFingerprintsAsTheIntegerItPersistsAs() {
    for value: UInt64 in [0, 5, UInt64(Int64.max)] {
      #expect(
        PropertyListValue.unsignedInteger(value).fingerprint == PropertyListValue.integer(Int64(value)).fingerprint)
    }
  }

  /// Numbers of different kinds with the same bits or the same numeric value.
  @Test func numbersOfDifferentKindsDiffer() {
    let values: [PropertyListValue] = [
      .integer(0), .integer(1), .integer(Int64(bitPattern: Double(1).bitPattern)), .double(0), .double(1),
      .bool(false), .bool(true), .unsignedInteger(Double(-1).bitPattern), .double(-1),
      .date(Date(timeIntervalSince1970: 1)), .date(Date(timeIntervalSince1970: 0)),
    ]
    #expect(Set(values.map(\.fingerprint)).count == values.count)
  }

  /// Fingerprints recorded before unsigned integers got their own encoding: ledgers
  /// written then must still match the values they describe.
  @Test func otherValuesKeepTheirFingerprints() {
    let recorded: [(PropertyListValue, UInt64)] = [
      (.string("dusk"), 0x1d3a_17d0_a80f_57e1),
      (.integer(-1), 0xaf94_b0df_c57c_ce5d),
      (.integer(0), 0x0cd9_2cf5_4dc6_15e5),
      (.integer(Int64.max), 0xaf94_30df_c57b_f4dd),
      (.integer(Int64.min), 0x0cd9_acf5_4dc6_ef65),
      (.double(1), 0x7938_4a97_b8fc_a0cb),
      (.double(-0.0), 0x796e_d797_b92b_1fd2),
      (.double(.nan), 0x7953_8a97_b913_d543),
      (.bool(true), 0xaf63_b84c_8601_af60),
      (.bool(false), 0xaf63_b94c_8601_b113),
      (.date(Date(timeIntervalSince1970: 1_700_000_000.789)), 0xa4bb_c23a_e4b7_e5d6),
      (.data(Data([0, 1, 255])), 0x43e0_6900_eb78_a7ff),
      (.array([.integer(1), .string("a")]), 0x3dbe_12be_8aa8_37fd),
      (.dictionary(["b": .integer(2), "a": .bool(true)]), 0x02dd_6590_4ac4_96e2),
    ]
    for (value, fingerprint) in recorded {
      #expect(value.fingerprint.rawValue == fingerprint, "\(value)")
    }
  }

  /// A value read back from a real suite fingerprints as it did before it was written.
  @Test func valuesReadBackFromUserDefaultsKeepTheirFingerprints() throws {
    let values: [String: PropertyListValue] = [
      "minus one": .integer(-1), "max unsigned": .unsignedInteger(UInt64.max), "min": .integer(Int64.min),
      "two to the 63": .unsignedInteger(UInt64(1) << 63), "max": .integer(Int64.max), "zero": .integer(0),
      "whole double": .double(1), "true": .bool(true), "false": .bool(false),
      "nested": .dictionary([
        "list": .array([.unsignedInteger(UInt64.max), .integer(-1)]), "n": .unsignedInteger(UInt64(1) << 63),
      ]),
    ]
    let suiteName = "zephyr-tests.fingerprint.\(UUID().uuidString.prefix(8))"
    let defaults = try #require(UserDefaults(suiteName: suiteName))
    defer { defaults.removePersistentDomain(forName: suiteName) }
    for (key, value) in values { defaults.set(value.foundationValue, forKey: key) }

    let domain = try #require(defaults.persistentDomain(forName: suiteName))
    for (key, value) in values {
      let read = try #require(domain[key].flatMap(PropertyListValue.init(bridging:)), "\(key)")
      #expect(read == value, "\(key)")
      #expect(read.fingerprint == value.fingerprint, "\(key)")
    }
  }

  /// The bug: -1 and `UInt64.max` fingerprinted alike, so changing one to the other
  /// looked like no change and was never pushed.
  @Test func changeFromMinusOneToMaxUnsignedReachesTheOtherDevice() {
    let harness = Harness()
    let a = harness.device("A", monitored: ["counter"])
    let b = harness.device("B", monitored: ["counter"])
    a.set(.integer(-1), "counter")
    harness.round()
    #expect(b.value("counter") == .integer(-1))

    a.set(.unsignedInteger(UInt64.max), "counter")
    a.coordinator.sync()
    harness.cloud.deliver()

    #expect(a.record("counter")?.content == .value(.unsignedInteger(UInt64.max)), "the change was pushed")
    #expect(b.value("counter") == .unsignedInteger(UInt64.max))
    harness.round()
    #expect(a.value("counter") == .unsignedInteger(UInt64.max))
  }
}

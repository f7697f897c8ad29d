import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// How each kind of value is stored, and how a stored value of another type reads.
struct SyncValueTests {
  @Test func primitivesAreStoredAsTheirPlainPropertyListValue() throws {
    #expect(true.propertyList == .bool(true))
    #expect(42.propertyList == .integer(42))
    #expect(1.5.propertyList == .double(1.5))
    #expect("dusk".propertyList == .string("dusk"))
    #expect(Date(timeIntervalSince1970: 9).propertyList == .date(Date(timeIntervalSince1970: 9)))
    #expect(Data([1, 2]).propertyList == .data(Data([1, 2])))
    #expect(try ["a", "b"].propertyList == .array([.string("a"), .string("b")]))
    #expect(try ["a": 1].propertyList == .dictionary(["a": .integer(1)]))
    #expect(try String?.none.propertyList == nil)
    #expect(try Theme.dusk.propertyList == .string("dusk"))
  }

  @Test func aTypeBothRawRepresentableAndCodableIsStoredAsItsRawValue() throws {
    #expect(try Density.compact.propertyList == .integer(1))
    #expect(Density(propertyList: .integer(2)) == .comfortable)
  }

  @Test func codableValuesAreStoredAsAPropertyListDictionary() throws {
    let layout = Layout(columns: 3, title: "Home", pinned: ["a"], updated: nil)
    let stored = try #require(try layout.propertyList)
    #expect(
      stored == .dictionary(["columns": .integer(3), "title": .string("Home"), "pinned": .array([.string("a")])]))
    #expect(Layout(propertyList: stored) == layout)
  }

  @Test func aCodableTypeThatEncodesABareValueRoundTrips() throws {
    let stored = try #require(try Celsius(21.5).propertyList)
    #expect(stored == .double(21.5))
    #expect(Celsius(propertyList: stored) == Celsius(21.5))
  }

  @Test func valuesOfAnotherTypeDoNotDecode() {
    #expect(Int(propertyList: .string("7")) == nil)
    #expect(String(propertyList: .integer(1)) == nil)
    #expect([String](propertyList: .array([.string("a"), .integer(1)])) == nil)
    #expect([String: Int](propertyList: .dictionary(["a": .string("b")])) == nil)
    #expect(Theme(propertyList: .string("sepia")) == nil)
    #expect(Layout(propertyList: .dictionary(["columns": .string("x")])) == nil)
    #expect(String?(propertyList: .integer(1)) == nil)
  }

  @Test func lenientReadsMatchWhatUserDefaultsAccessorsAccept() {
    #expect(Bool(propertyList: .integer(1)) == true)
    #expect(Double(propertyList: .integer(14)) == 14)
  }

  /// `integer(forKey:)` reads a stored 14.0 as 14, and `bool(forKey:)` reads any number;
  /// typed keys read numbers as leniently, but parse no strings.
  @Test func numbersReadAsUserDefaultsNumericAccessorsReadThem() {
    #expect(Int(propertyList: .double(14)) == 14)
    #expect(Int(propertyList: .double(-3)) == -3)
    #expect(Int(propertyList: .double(14.5)) == nil, "a fraction is no integer")
    #expect(Int(propertyList: .double(1e300)) == nil, "out of Int's range")
    #expect(Int(propertyList: .double(.nan)) == nil)
    #expect(Bool(propertyList: .integer(2)) == true)
    #expect(Bool(propertyList: .integer(0)) == false)
    #expect(Bool(propertyList: .double(0.5)) == true)
    #expect(Bool(propertyList: .double(0)) == false)
    #expect(Double(propertyList: .integer(-7)) == -7)
    #expect(Int(propertyList: .string("14")) == nil, "strings are not parsed")
    #expect(Bool(propertyList: .string("YES")) == nil, "strings are not parsed")
    #expect(Double(propertyList: .string("1.5")) == nil, "strings are not parsed")
  }

  /// Written through plain `UserDefaults` by other code, read through typed keys as the
  /// accessors read them.
  @Test func aKeyReadsNumbersWrittenThroughPlainUserDefaultsAsItsAccessorsDo() {
    let harness = Harness()
    let a = harness.device("A")
    a.defaults.set(14.0, forKey: "count")
    a.defaults.set(2, forKey: "flag")
    a.defaults.set(12, forKey: "size")
    #expect(a.coordinator[Keys.count] == a.defaults.integer(forKey: "count"))
    #expect(a.coordinator[Keys.count] == 14)
    #expect(a.coordinator[Keys.flag] == a.defaults.bool(forKey: "flag"))
    #expect(a.coordinator[Keys.flag] == true)
    #expect(a.coordinator[Keys.size] == 12)
  }

  @Test func aCodableValueThatCannotBeEncodedThrowsRatherThanReadingAsNil() throws {
    #expect(throws: EncodingError.self) { try Fragile(-1).propertyList }
    #expect(throws: EncodingError.self) { try Fragile?.some(Fragile(-1)).propertyList }
    #expect(throws: EncodingError.self) { try [Fragile(1), Fragile(-1)].propertyList }
    #expect(throws: EncodingError.self) { try ["a": Fragile(-1)].propertyList }
    #expect(try Fragile(5).propertyList == .integer(5))
    #expect(try Fragile?.none.propertyList == nil, "nil is a removal, not a failure")
  }

  @Test func aKeyReadsItsDefaultWhenAbsentOrOfAnotherType() {
    #expect(Keys.count.value(from: nil) == 7)
    #expect(Keys.count.value(from: .string("seven")) == 7)
    #expect(Keys.count.value(from: .integer(3)) == 3)
    #expect(Keys.nickname.value(from: nil) == nil)
  }
}

import Foundation
import Testing

@testable import Zephyr

/// How each kind of value is stored, and how a stored value of another type reads.
struct SyncValueTests {
  @Test func primitivesAreStoredAsTheirPlainPropertyListValue() {
    #expect(true.propertyList == .bool(true))
    #expect(42.propertyList == .integer(42))
    #expect(1.5.propertyList == .double(1.5))
    #expect("dusk".propertyList == .string("dusk"))
    #expect(Date(timeIntervalSince1970: 9).propertyList == .date(Date(timeIntervalSince1970: 9)))
    #expect(Data([1, 2]).propertyList == .data(Data([1, 2])))
    #expect(["a", "b"].propertyList == .array([.string("a"), .string("b")]))
    #expect(["a": 1].propertyList == .dictionary(["a": .integer(1)]))
    #expect(String?.none.propertyList == nil)
    #expect(Theme.dusk.propertyList == .string("dusk"))
  }

  @Test func aTypeBothRawRepresentableAndCodableIsStoredAsItsRawValue() {
    #expect(Density.compact.propertyList == .integer(1))
    #expect(Density(propertyList: .integer(2)) == .comfortable)
  }

  @Test func codableValuesAreStoredAsAPropertyListDictionary() throws {
    let layout = Layout(columns: 3, title: "Home", pinned: ["a"], updated: nil)
    let stored = try #require(layout.propertyList)
    #expect(
      stored == .dictionary(["columns": .integer(3), "title": .string("Home"), "pinned": .array([.string("a")])]))
    #expect(Layout(propertyList: stored) == layout)
  }

  @Test func aCodableTypeThatEncodesABareValueRoundTrips() throws {
    let stored = try #require(Celsius(21.5).propertyList)
    #expect(stored == .double(21.5))
    #expect(Celsius(propertyList: stored) == Celsius(21.5))
  }

  @Test func valuesOfAnotherTypeDoNotDecode() {
    #expect(Int(propertyList: .string("7")) == nil)
    #expect(Bool(propertyList: .integer(2)) == nil)
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

  @Test func aKeyReadsItsDefaultWhenAbsentOrOfAnotherType() {
    #expect(Keys.count.value(from: nil) == 7)
    #expect(Keys.count.value(from: .string("seven")) == 7)
    #expect(Keys.count.value(from: .integer(3)) == 3)
    #expect(Keys.nickname.value(from: nil) == nil)
  }
}

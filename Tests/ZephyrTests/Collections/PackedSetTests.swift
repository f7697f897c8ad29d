import Foundation
import Testing

@testable import Zephyr

/// `PackedSet`: a set of integer ids that is one `Data` in `UserDefaults` and the store.
struct PackedSetTests {
  static func randomSet<T: FixedWidthInteger>(_ type: T.Type, count: Int, seed: UInt64) -> Set<T> {
    var generator = SeededGenerator(seed: seed)
    var set = Set<T>()
    while set.count < count { set.insert(T.random(in: T.min...T.max, using: &generator)) }
    return set
  }

  static func roundTrip<T: FixedWidthInteger & Sendable>(_ set: PackedSet<T>) throws -> PackedSet<T>? {
    let stored = try #require(try set.propertyList)
    guard case .data = stored else { return nil }
    return PackedSet<T>(propertyList: stored)
  }

  @Test func isStoredAsOneDataValue() throws {
    let set: PackedSet<UInt32> = [3, 1, 2]
    let stored = try #require(try set.propertyList)
    guard case .data(let blob) = stored else {
      Issue.record("stored as \(stored.logDescription)")
      return
    }
    #expect(PackedIntegers.decode(blob) == [1, 2, 3])
  }

  @Test(arguments: [0, 1, 2, 50, 3_000])
  func randomSetsRoundTripForEveryWidthAndSign(_ count: Int) throws {
    for seed in UInt64(1)...3 {
      let unsigned32 = Self.randomSet(UInt32.self, count: count, seed: seed)
      #expect(try Self.roundTrip(PackedSet(unsigned32)).map(Set.init) == unsigned32)
      let signed64 = Self.randomSet(Int64.self, count: count, seed: seed)
      #expect(try Self.roundTrip(PackedSet(signed64)).map(Set.init) == signed64)
      let signed16 = Self.randomSet(Int16.self, count: min(count, 1_000), seed: seed)
      #expect(try Self.roundTrip(PackedSet(signed16)).map(Set.init) == signed16)
      let unsigned64 = Self.randomSet(UInt64.self, count: count, seed: seed)
      #expect(try Self.roundTrip(PackedSet(unsigned64)).map(Set.init) == unsigned64)
    }
  }

  @Test func edgeValuesRoundTrip() throws {
    #expect(try Self.roundTrip(PackedSet<UInt32>()) == [])
    #expect(try Self.roundTrip([UInt64.max] as PackedSet<UInt64>) == [UInt64.max])
    #expect(try Self.roundTrip([0, UInt64.max] as PackedSet<UInt64>) == [0, UInt64.max])
    #expect(
      try Self.roundTrip([Int64.min, -1, 0, 1, Int64.max] as PackedSet<Int64>) == [Int64.min, -1, 0, 1, Int64.max])
    #expect(try Self.roundTrip([Int8.min, -1, 0, Int8.max] as PackedSet<Int8>) == [Int8.min, -1, 0, Int8.max])
    #expect(try Self.roundTrip([Int.min, Int.max] as PackedSet<Int>) == [Int.min, Int.max])
  }

  @Test func signedElementsIterateInNumericOrder() {
    let set: PackedSet<Int64> = [5, -3, Int64.min, 0, Int64.max, -1]
    #expect(Array(set) == [Int64.min, -3, -1, 0, 5, Int64.max])
  }

  @Test func aBlobReadsAsAnyTypeItsValuesFit() throws {
    let stored = try #require(try ([1, 70_000] as PackedSet<UInt32>).propertyList)
    #expect(PackedSet<UInt64>(propertyList: stored) == [1, 70_000])
    #expect(PackedSet<UInt16>(propertyList: stored) == nil)  // 70,000 does not fit
    let negative = try #require(try ([-5, 3] as PackedSet<Int32>).propertyList)
    #expect(PackedSet<Int64>(propertyList: negative) == [-5, 3])
    #expect(PackedSet<Int8>(propertyList: negative) == [-5, 3])
  }

  @Test func malformedStoredValuesDecodeToNil() throws {
    let blob = try #require(PackedIntegers.encode([1, 2, 3, 1_000]) as Data?)
    #expect(PackedSet<UInt32>(propertyList: .data(blob.dropLast())) == nil)  // truncated
    #expect(PackedSet<UInt32>(propertyList: .data(blob + Data([7]))) == nil)  // trailing bytes
    #expect(PackedSet<UInt32>(propertyList: .data(Data([0x00]) + blob.dropFirst())) == nil)  // wrong header
    #expect(PackedSet<UInt32>(propertyList: .data(Data())) == nil)
    #expect(PackedSet<UInt32>(propertyList: .data(Data(count: 400))) == nil)  // a hand-packed blob of 100 zero ids
    // A plain array of numbers (a foreign writer, or the key's older `[Int]` form) is not a packed set.
    #expect(PackedSet<UInt32>(propertyList: .array([.integer(1), .integer(2)])) == nil)
    #expect(PackedSet<UInt32>(propertyList: .string("1,2")) == nil)
  }

  @Test func insertRemoveAndContains() {
    var set: PackedSet<UInt32> = [10, 20]
    #expect(set.insert(15) == (true, 15))
    #expect(set.insert(15) == (false, 15))
    #expect(set.contains(15) && !set.contains(16))
    #expect(set.remove(10) == 10)
    #expect(set.remove(10) == nil)
    #expect(set.update(with: 30) == nil)
    #expect(set.update(with: 30) == 30)
    #expect(Array(set) == [15, 20, 30])
    #expect(set.count == 3 && !set.isEmpty)
  }

  @Test func aMutationIsStoredAsTheNewSet() throws {
    var set = try #require(try Self.roundTrip([1, 2, 3] as PackedSet<UInt32>))
    set.insert(4)
    #expect(try Self.roundTrip(set) == [1, 2, 3, 4])
    set.remove(1)
    #expect(try Self.roundTrip(set) == [2, 3, 4])
  }

  @Test func copiesAreIndependent() {
    let original: PackedSet<UInt32> = [1, 2, 3]
    var copy = original
    copy.insert(9)
    #expect(original == [1, 2, 3] && copy == [1, 2, 3, 9])
  }

  @Test func equalSetsAreEqualAndHashAlike() throws {
    let built = PackedSet<UInt32>([3, 1, 2, 2])
    let decoded = try #require(try Self.roundTrip(built))
    #expect(built == decoded && built == [1, 2, 3])
    #expect(built.hashValue == decoded.hashValue)
    #expect(built != [1, 2])
    #expect(Set([built, decoded, [1, 2]]).count == 2)
  }

  /// The laws of `SetAlgebra`, on random samples compared with `Set`.
  @Test(arguments: [0, 1, 17, 400])
  func setAlgebraAgreesWithSet(_ count: Int) {
    var generator = SeededGenerator(seed: UInt64(count) + 5)
    for _ in 0..<20 {
      let a = Set((0..<count).map { _ in Int32.random(in: -600...600, using: &generator) })
      let b = Set((0..<count).map { _ in Int32.random(in: -600...600, using: &generator) })
      let c = Set((0..<count / 2).map { _ in Int32.random(in: -600...600, using: &generator) })
      let (x, y, z) = (PackedSet(a), PackedSet(b), PackedSet(c))
      #expect(Set(x.union(y)) == a.union(b))
      #expect(Set(x.intersection(y)) == a.intersection(b))
      #expect(Set(x.symmetricDifference(y)) == a.symmetricDifference(b))
      #expect(Set(x.subtracting(y)) == a.subtracting(b))
      #expect(x.isSubset(of: y) == a.isSubset(of: b))
      #expect(x.isDisjoint(with: y) == a.isDisjoint(with: b))
      #expect(x.isSubset(of: x.union(y)) && x.union(y).isSuperset(of: y))
      // Commutative, associative, idempotent, distributive.
      #expect(x.union(y) == y.union(x) && x.intersection(y) == y.intersection(x))
      #expect(x.union(y).union(z) == x.union(y.union(z)))
      #expect(x.intersection(y).intersection(z) == x.intersection(y.intersection(z)))
      #expect(x.union(x) == x && x.intersection(x) == x && x.symmetricDifference(x).isEmpty)
      #expect(x.intersection(y.union(z)) == x.intersection(y).union(x.intersection(z)))
      // Iteration is sorted and unique.
      #expect(Array(x) == a.sorted())
      for element in a.prefix(5) { #expect(x.contains(element)) }
    }
  }

  @Test func formOperationsMatchTheirValueForms() {
    let a: PackedSet<UInt8> = [1, 2, 3, 200]
    let b: PackedSet<UInt8> = [2, 200, 255]
    var u = a
    u.formUnion(b)
    var i = a
    i.formIntersection(b)
    var s = a
    s.formSymmetricDifference(b)
    var d = a
    d.subtract(b)
    #expect(u == a.union(b) && i == a.intersection(b) && s == a.symmetricDifference(b) && d == a.subtracting(b))
    #expect(Array(d) == [1, 3])
  }

  @Test func aReadHistoryOf25000IdsIsAboutItsEntropy() throws {
    let ids = Self.randomSet(UInt32.self, count: 25_000, seed: 25)
    guard case .data(let blob)? = try PackedSet(ids).propertyList else {
      Issue.record("not stored as data")
      return
    }
    let entropy = PackedIntegersTests.entropyBytes(count: 25_000, below: Double(UInt64(1) << 32))
    #expect(Double(blob.count) <= entropy * 1.01 + 16, "\(blob.count) bytes, entropy \(Int(entropy))")
    #expect(blob.count * 100 < 25_000 * 4 * 60)  // under 60% of the 4-byte hand pack
  }

  @Test func describesItselfShortly() {
    #expect(String(describing: [3, 1] as PackedSet<UInt32>) == "PackedSet([1, 3])")
    #expect(String(describing: PackedSet(0..<1_000 as Range<UInt32>)).hasPrefix("PackedSet(1000 elements: [0, 1,"))
  }
}

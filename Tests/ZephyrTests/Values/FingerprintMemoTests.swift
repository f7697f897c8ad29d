import Foundation
import Testing

@testable import Zephyr

/// A large `Data` is hashed once while it is remembered, and a fingerprint found in the
/// memo is always the one its bytes hash to: a copy changed, a slice, or a value that
/// took over freed memory is hashed anew.
struct FingerprintMemoTests {
  static func data(_ count: Int, seed: UInt64) -> Data {
    var generator = SeededGenerator(seed: seed)
    return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
  }

  @Test func aValueFingerprintedAgainIsNotHashedAgain() {
    let memo = Locked(FingerprintMemo())
    let hashed = Locked(0)
    func fingerprint(_ data: Data) -> Fingerprint {
      memo.fingerprint(of: data) { value in
        hashed.withLock { $0 += 1 }
        return value.computedFingerprint
      }
    }
    let value = Self.data(60_000, seed: 1)
    let first = fingerprint(value)
    let copy = value
    #expect(fingerprint(copy) == first)
    #expect(fingerprint(value) == first)
    #expect(hashed.withLock { $0 } == 1, "hashed once, found twice")
    #expect(memo.withLock { $0.hits } == 2)

    var changed = value
    changed[100] ^= 1
    #expect(fingerprint(changed) == PropertyListValue.data(changed).computedFingerprint)
    #expect(fingerprint(changed) != first)
    #expect(fingerprint(value[1...]) == PropertyListValue.data(Data(value[1...])).computedFingerprint)
    #expect(hashed.withLock { $0 } == 3, "a changed copy and a slice are other bytes")

    // Older entries make way for new ones.
    for seed in 2..<UInt64(2 + FingerprintMemo.capacity) { _ = fingerprint(Self.data(5_000, seed: seed)) }
    let before = hashed.withLock { $0 }
    _ = fingerprint(value)
    #expect(hashed.withLock { $0 } == before + 1, "forgotten")
  }

  /// Through `fingerprint`, under any sequence of copies, in-place changes and slices,
  /// every large value fingerprints as its bytes hash.
  @Test func everyFingerprintIsTheHashOfItsBytes() {
    var generator = SeededGenerator(seed: 7)
    var values: [Data] = []
    for round in 0..<300 {
      let step = Int.random(in: 0..<4, using: &generator)
      switch values.isEmpty ? 0 : step {
      case 0:
        values.append(Self.data(Int.random(in: 4_096..<9_000, using: &generator), seed: UInt64(round)))
      case 1:
        // Changed in place: unique, or shared with the memo (copied on write).
        let index = Int.random(in: 0..<values.count, using: &generator)
        values[index][Int.random(in: 0..<4_096, using: &generator)] &+= 1
      case 2:
        let index = Int.random(in: 0..<values.count, using: &generator)
        values.append(values[index].dropFirst(Int.random(in: 0..<3, using: &generator)))
      default:
        values.remove(at: Int.random(in: 0..<values.count, using: &generator))
      }
      for value in values {
        #expect(PropertyListValue.data(value).fingerprint == PropertyListValue.data(value).computedFingerprint)
      }
    }
  }

  /// Threads fingerprinting shared and fresh values at once (also run under the thread
  /// sanitizer) all get the hash of their bytes.
  @Test func threadsAtOnceGetTheHashOfTheirBytes() {
    let shared = (0..<4).map { Self.data(6_000, seed: 100 + UInt64($0)) }
    let expected = shared.map { PropertyListValue.data($0).computedFingerprint }
    let mismatches = Locked(0)
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
      for step in 0..<40 {
        let index = (thread + step) % shared.count
        var fingerprint = PropertyListValue.data(shared[index]).fingerprint
        if fingerprint != expected[index] { mismatches.withLock { $0 += 1 } }
        var changed = shared[index]
        changed[step] &+= 1
        fingerprint = PropertyListValue.data(changed).fingerprint
        if fingerprint != PropertyListValue.data(changed).computedFingerprint { mismatches.withLock { $0 += 1 } }
      }
    }
    #expect(mismatches.withLock { $0 } == 0)
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A value with no stored form (a `Codable` whose `encode(to:)` throws) is refused: it
/// is never taken for `nil`, which would delete the key on every device.
struct TypedRefusalTests {
  /// A and B both hold `Fragile(5)`, synced.
  private func twoDevicesAgreeingOnFive() -> (harness: Harness, a: TestDevice, b: TestDevice) {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: [Keys.fragile.name])
    a.coordinator[Keys.fragile] = Fragile(5)
    a.settle()
    harness.cloud.deliver()
    return (harness, a, b)
  }

  @Test func aValueThatCannotBeEncodedIsRefusedAndDeletesNothing() throws {
    let (harness, a, b) = twoDevicesAgreeingOnFive()
    #expect(b.value("fragile") == .integer(5))
    let record = a.record("fragile")
    let before = a.store.statistics

    a.coordinator[Keys.fragile] = Fragile(-1)
    a.settle()
    harness.cloud.deliver()

    #expect(a.value("fragile") == .integer(5), "UserDefaults keeps the value")
    #expect(a.coordinator[Keys.fragile] == Fragile(5))
    #expect(a.record("fragile") == record, "the store keeps the record")
    #expect(a.store.statistics == before, "nothing was pushed")
    #expect(b.value("fragile") == .integer(5), "the other device keeps the value")
    let reason = try #require(a.coordinator.status.refusedKeys["fragile"])
    guard case .unencodable(let error) = reason else {
      Issue.record("refused for \(reason)")
      return
    }
    #expect(error.contains("negative"))
    #expect(a.warnings.contains { $0.contains("fragile") && $0.contains("negative") }, "\(a.warnings)")
  }

  @Test func anOptionalValueThatCannotBeEncodedIsNotARemoval() {
    let harness = Harness()
    let a = harness.device("A")
    let key = SyncKey<Fragile?>("maybe")
    a.coordinator[key] = Fragile(2)
    a.settle()

    a.coordinator[key] = Fragile(-2)
    a.settle()

    #expect(a.value("maybe") == .integer(2))
    #expect(a.record("maybe")?.content == .value(.integer(2)))
    a.coordinator[key] = nil  // a real removal still removes
    a.settle()
    #expect(a.value("maybe") == nil)
  }

  @Test func aRefusedTypedWriteStaysListedUntilASetOfTheKeySucceeds() {
    let (harness, a, _) = twoDevicesAgreeingOnFive()
    a.coordinator[Keys.fragile] = Fragile(-1)
    a.settle()

    a.coordinator.sync()  // handles the key, in step with the store: not a write of it
    harness.cloud.deliver()
    #expect(a.coordinator.status.refusedKeys["fragile"] != nil)
    #expect(a.coordinator.status.description.contains("could not be encoded"))

    a.coordinator[Keys.fragile] = Fragile(6)
    #expect(a.coordinator.status.refusedKeys["fragile"] == nil)
    a.settle()
    #expect(a.record("fragile")?.content == .value(.integer(6)))
  }

  @MainActor @Test func aSyncedValueShowsWhatUserDefaultsHoldsAfterARefusedSet() {
    let harness = Harness()
    let a = harness.device("A")
    let model = SyncedValue(Keys.fragile, coordinator: a.coordinator)
    model.value = Fragile(4)
    #expect(model.value == Fragile(4))

    model.value = Fragile(-4)

    #expect(model.value == Fragile(4), "the refused value is not shown")
    #expect(a.value("fragile") == .integer(4))
  }
}

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// A key a batch decided to leave alone is not decided again while nothing it was decided
/// from changed (``SettledKeys``): the rules are a pure function of the key's local value,
/// store value, ledger entry, declaration and the device's clock. Any change to one of them
/// decides the key again, so the shortcut never changes an outcome.
struct SettledKeyTests {
  private func decided(_ device: TestDevice) -> Int {
    device.coordinator.engine.state.withLock { $0.settled.decisionsMade }
  }

  /// A and B agree on `keys`, and each has synced since (so each has decided every key
  /// from the values it now holds); B monitors them.
  private func agreed(_ keys: [String: PropertyListValue]) -> (Harness, TestDevice, TestDevice) {
    let harness = Harness()
    let a = harness.device("A")
    let b = harness.device("B", monitored: keys.keys.sorted())
    for (key, value) in keys { a.set(value, key) }
    a.coordinator.sync()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)
    b.coordinator.sync()  // pulls
    a.coordinator.sync()
    b.coordinator.sync()  // decides from what it pulled
    return (harness, a, b)
  }

  @Test func aSteadySyncDecidesNoKeyAgain() {
    let (harness, a, b) = agreed(["theme": .string("dusk"), "size": .integer(3), "tags": .array([.string("x")])])
    for device in [a, b] {
      let before = decided(device)
      device.coordinator.sync()
      device.coordinator.sync()
      #expect(decided(device) == before, "a sync with nothing changed decided keys again")
    }
    withExtendedLifetime(harness) {}
  }

  @Test func aLocalEditMadeWithoutANotificationIsStillPushed() {
    let (harness, a, b) = agreed(["theme": .string("dusk"), "size": .integer(3)])
    let before = decided(a)
    a.defaults.set("dawn", forKey: "theme")  // not monitored: only a sync looks
    a.coordinator.waitForPendingLocalEdits()
    a.coordinator.sync()
    #expect(decided(a) == before + 1, "only the edited key is decided again")
    harness.cloud.deliver()
    #expect(b.value("theme") == .string("dawn"))
  }

  @Test func aStoreValueThatChangedUnnoticedIsStillPulled() {
    let (harness, a, b) = agreed(["theme": .string("dusk"), "size": .integer(3)])
    a.set(.string("dawn"), "theme")
    a.coordinator.sync()
    harness.cloud.upload()
    harness.cloud.download(to: "B", notify: false)  // no event: only the next sync sees it
    let before = decided(b)
    b.coordinator.sync()
    #expect(decided(b) == before + 1)
    #expect(b.value("theme") == .string("dawn"))
  }

  @Test func anEditOfOneKeyLeavesTheOthersSettled() {
    let (harness, a, _) = agreed(["theme": .string("dusk"), "size": .integer(3), "font": .string("serif")])
    let theme = SyncKey<String>("theme", default: "")
    _ = a.coordinator[theme]  // a first use declares the key: every key is decided once more
    a.coordinator.waitForPendingLocalEdits()
    a.coordinator.sync()
    a.coordinator[theme] = "dawn"
    a.coordinator.waitForPendingLocalEdits()
    let before = decided(a)
    a.coordinator.sync()
    // The push moved the clock; only the key it wrote is decided again, once.
    #expect(decided(a) == before + 1)
    a.coordinator.sync()
    #expect(decided(a) == before + 1)
    withExtendedLifetime(harness) {}
  }

  @Test func aKeyDeclaredWithAStrategyLaterIsDecidedAgain() {
    let (harness, a, _) = agreed(["tags": .array([.string("x")])])
    let before = decided(a)
    a.coordinator.configuration.mergeStrategies["tags"] = .set
    a.coordinator.sync()
    #expect(decided(a) == before + 1, "the declaration is one of the inputs")
    withExtendedLifetime(harness) {}
  }

  @Test func aLedgerEntryChangedBehindTheBatchIsDecidedAgain() {
    let (harness, a, _) = agreed(["theme": .string("dusk")])
    a.coordinator.engine.state.withLock { $0.setLedger("theme", nil) }
    let before = decided(a)
    a.coordinator.sync()
    #expect(decided(a) == before + 1)
    #expect(a.coordinator.engine.state.withLock { $0.ledger["theme"] } != nil, "agreed again, as with no history")
    withExtendedLifetime(harness) {}
  }

  @Test func anAccountChangeDecidesEveryKeyAgain() {
    let (harness, _, b) = agreed(["theme": .string("dusk"), "size": .integer(3)])
    let before = decided(b)
    harness.cloud.post(ExternalChange(reason: .accountChange, keys: nil), to: "B")
    #expect(decided(b) == before + 2)
  }

  @Test func aSuiteSharedWithAnotherProcessDecidesEveryKey() {
    // Another process on the suite may have agreed on a later state that this one's
    // inputs do not show: no key is taken as settled.
    let harness = Harness()
    let a = harness.device("A", configure: { $0.sharedByProcesses = true })
    a.set(.string("dusk"), "theme")
    a.set(.integer(3), "size")
    a.coordinator.sync()
    a.coordinator.sync()
    let before = decided(a)
    a.coordinator.sync()
    #expect(decided(a) == before + 2)
  }

  @Test func aKeyWhoseLocalValueIsPresumedIsDecided() {
    // An inbound event takes a strategy key's local value from its ledger, unread: the
    // batch decides it, which confirms the value.
    let (harness, a, b) = agreed(["tags": .array([.string("x")])])
    for device in [a, b] { device.coordinator.configuration.mergeStrategies["tags"] = .set }
    b.coordinator.sync()
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["tags"]), to: "B")
    let before = decided(b)
    harness.cloud.post(ExternalChange(reason: .serverChange, keys: ["tags"]), to: "B")
    #expect(decided(b) == before + 1, "the same inputs as the last event's, but presumed")
  }
}

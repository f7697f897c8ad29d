import Foundation

@testable import Zephyr

/// Suite-name prefixes for tests that create thousands of harnesses.
///
/// swift-corelibs-foundation keeps every `UserDefaults` suite a process opened in a cache
/// and walks the whole cache on every `synchronize()` (which `removePersistentDomain`
/// calls), so fresh names make each harness slower than the last. A borrowed prefix is
/// used by one harness at a time; the harness empties its suites when it is released.
final class SuitePool: Sendable {
  static let shared = SuitePool()

  /// A folder on a RAM disk where there is one, so that saving a ledger (an atomic,
  /// fsynced write) costs no disk flush.
  static let ledgerRoot: URL? = {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: "/dev/shm", isDirectory: &isDirectory), isDirectory.boolValue,
      FileManager.default.isWritableFile(atPath: "/dev/shm")
    else { return nil }
    return URL(fileURLWithPath: "/dev/shm", isDirectory: true)
  }()

  private struct Slots {
    var free: [World: [String]] = [:]
    var created = 0
  }

  private let slots = Locked(Slots())
  private let name = "zephyr-pool.\(UUID().uuidString.prefix(6))"

  /// Runs `body` with a prefix no other running `body` uses. Everything `body` built on
  /// it must be released when it returns.
  /// Suites of one world are never reused by the other: Foundation keeps the first
  /// instance a suite name was opened with.
  func withPrefix<Result>(world: World = .apple, _ body: (String) -> Result) -> Result {
    let prefix = slots.withLock { slots in
      if let prefix = slots.free[world]?.popLast() { return prefix }
      slots.created += 1
      return "\(name).\(world).\(slots.created)"
    }
    defer { slots.withLock { $0.free[world, default: []].append(prefix) } }
    return body(prefix)
  }
}

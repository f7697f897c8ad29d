import Foundation

@testable import Zephyr

/// Runs facade tests against a device's coordinator. `Zephyr.shared` is global, and suites
/// run in parallel: one lock serializes every test that swaps it, across suites.
enum SharedFacade {
  private static let lock = NSLock()

  /// Makes `coordinator` the facade's shared coordinator for the duration of `body`,
  /// then puts the previous one back.
  static func using<T>(_ coordinator: SyncCoordinator, _ body: () throws -> T) rethrows -> T {
    lock.lock()
    defer { lock.unlock() }
    let previous = Zephyr.shared
    Zephyr.shared = coordinator
    defer { Zephyr.shared = previous }
    return try body()
  }

  /// Runs `body` with no shared coordinator and no pending facade configuration, as in a
  /// freshly launched app, then restores both.
  static func withoutShared<T>(_ body: () throws -> T) rethrows -> T {
    lock.lock()
    defer { lock.unlock() }
    let previous = Zephyr.sharedCoordinator.withLock { coordinator in
      defer { coordinator = nil }
      return coordinator
    }
    let pending = Zephyr.pendingConfiguration.withLock { pending in
      defer { pending = SyncConfiguration() }
      return pending
    }
    defer {
      Zephyr.sharedCoordinator.withLock { $0 = previous }
      Zephyr.pendingConfiguration.withLock { $0 = pending }
    }
    return try body()
  }
}

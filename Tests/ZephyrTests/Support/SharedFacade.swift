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
}

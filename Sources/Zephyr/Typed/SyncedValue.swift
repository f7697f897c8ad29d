import Foundation
import Observation

/// One synced key as an observable model, for the main actor: read and set ``value``;
/// changes from other devices (and from other code on this one) arrive by themselves.
///
/// ```swift
/// @MainActor final class SettingsScreen {
///   let theme = SyncedValue(Settings.theme, coordinator: coordinator)
///
///   func pickDusk() { theme.value = "dusk" }   // writes UserDefaults, pushes the key
/// }
/// ```
///
/// It is `@Observable`: SwiftUI views, `withObservationTracking` and (in
/// `ZephyrSwiftUI`) `@SyncedDefault` see every change of ``value``. It follows the key
/// through ``SyncCoordinator/changes(of:)`` from its creation until it is released, and
/// applies each change on the main actor, re-reading the key so that it always shows
/// what `UserDefaults` holds (a value set here is never replaced by an older one
/// arriving late). Creating it is a use of the key (see
/// ``SyncCoordinator/subscript(_:)``): a first use pulls a value that arrived before it,
/// and the model shows that value once pulled.
@MainActor
@Observable
public final class SyncedValue<Value: SyncValue> {
  /// The key this model follows.
  @ObservationIgnored public let key: SyncKey<Value>
  /// The coordinator it reads and writes through.
  @ObservationIgnored public let coordinator: SyncCoordinator
  private var current: Value
  /// The stored form ``current`` was read from (`nil`: absent), to tell a change.
  @ObservationIgnored private var shown: PropertyListValue?
  @ObservationIgnored private var following: Task<Void, Never>?

  /// The key's value: what `UserDefaults` holds, or the key's default. Setting it
  /// writes `UserDefaults` and pushes the key, as ``SyncCoordinator/subscript(_:)`` does,
  /// then shows what `UserDefaults` holds: the default after `nil`, say, or the previous
  /// value when the new one could not be encoded (the set is then refused).
  public var value: Value {
    get { current }
    set {
      coordinator[key] = newValue
      refresh()
    }
  }

  /// Creates a model of `key` on `coordinator` and starts following it.
  ///
  /// - Parameters:
  ///   - key: The key to follow.
  ///   - coordinator: The coordinator to read and write through; ``Zephyr/shared`` by
  ///     default.
  public init(_ key: SyncKey<Value>, coordinator: SyncCoordinator = Zephyr.shared) {
    self.key = key
    self.coordinator = coordinator
    let stored = coordinator.engine.storedValue(forKey: key.name)
    shown = stored
    current = key.value(from: stored)
    let changes = coordinator.changes(of: key)
    following = Task { [weak self] in
      for await _ in changes {
        guard let self else { return }
        self.refresh()
      }
    }
  }

  deinit {
    following?.cancel()
  }

  /// Takes the key's value from `UserDefaults` when it differs from the one shown: a
  /// stream element only says that something changed, and may be older than a value set
  /// here since.
  private func refresh() {
    let stored = coordinator.engine.storedValue(forKey: key.name)
    guard stored != shown else { return }
    shown = stored
    current = key.value(from: stored)
  }
}

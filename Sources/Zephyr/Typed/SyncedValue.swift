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
/// arriving late).
@MainActor
@Observable
public final class SyncedValue<Value: SyncValue> {
  /// The key this model follows.
  @ObservationIgnored public let key: SyncKey<Value>
  /// The coordinator it reads and writes through.
  @ObservationIgnored public let coordinator: SyncCoordinator
  private var current: Value
  @ObservationIgnored private var following: Task<Void, Never>?

  /// The key's value: what `UserDefaults` holds, or the key's default. Setting it
  /// writes `UserDefaults` and pushes the key, as ``SyncCoordinator/subscript(_:)`` does.
  public var value: Value {
    get { current }
    set {
      coordinator[key] = newValue
      // As a read would return it: `nil` reads as the default, for one.
      current = key.value(from: newValue.propertyList)
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
    current = coordinator[key]
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
    let latest = coordinator[key]
    if latest.propertyList != current.propertyList { current = latest }
  }
}

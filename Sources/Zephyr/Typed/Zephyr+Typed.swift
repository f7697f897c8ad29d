import Foundation

extension Zephyr {
  /// The key's value on ``shared``; see ``SyncCoordinator/subscript(_:)``.
  ///
  /// ```swift
  /// Zephyr[Settings.theme] = "dark"   // writes UserDefaults, pushes this key
  /// Zephyr[Settings.theme]            // "dark"
  /// ```
  public static subscript<Value>(key: SyncKey<Value>) -> Value {
    get { shared[key] }
    set { shared[key] = newValue }
  }

  /// Removes the key's value on every device; see ``SyncCoordinator/removeValue(for:)``.
  ///
  /// ```swift
  /// Zephyr.removeValue(for: Settings.theme)
  /// ```
  public static func removeValue<Value>(for key: SyncKey<Value>) {
    shared.removeValue(for: key)
  }

  /// The key's value now, then every new value, on ``shared``; see
  /// ``SyncCoordinator/changes(of:)``.
  ///
  /// ```swift
  /// for await theme in Zephyr.changes(of: Settings.theme) { apply(theme) }
  /// ```
  public static func changes<Value>(of key: SyncKey<Value>) -> AsyncStream<Value> {
    shared.changes(of: key)
  }
}

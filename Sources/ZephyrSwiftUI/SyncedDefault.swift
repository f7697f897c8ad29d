// Compiled where SwiftUI exists; elsewhere (Linux) this module is empty.
#if canImport(SwiftUI)
  import SwiftUI
  import Zephyr

  /// A view property that reads and writes a synced key, and updates the view when the
  /// key changes, here or on another device.
  ///
  /// ```swift
  /// struct SettingsView: View {
  ///   @SyncedDefault(Settings.theme) var theme
  ///
  ///   var body: some View {
  ///     Picker("Theme", selection: $theme) {   // $theme is a Binding<String>
  ///       Text("Light").tag("light")
  ///       Text("Dark").tag("dark")
  ///     }
  ///   }
  /// }
  /// ```
  ///
  /// A thin layer over `SyncedValue`: the view keeps one model of the key for its
  /// lifetime (in `@State`), reads ``wrappedValue`` from it (so the Observation framework
  /// tracks it), and writes through it, which writes `UserDefaults` and pushes the key.
  /// Changes from other devices are applied on the main actor. The key and coordinator
  /// are those of the view's first appearance: the model is kept for the view's lifetime.
  ///
  /// Like `@AppStorage`, it stores plain property-list values under the key's name, so
  /// `@AppStorage("theme")` and `@SyncedDefault(Settings.theme)` see the same value.
  @MainActor
  @propertyWrapper
  public struct SyncedDefault<Value: SyncValue>: DynamicProperty {
    @State private var storage = ModelStorage<Value>()
    private let key: SyncKey<Value>
    private let coordinator: SyncCoordinator

    /// A property for `key` on `coordinator` (`Zephyr.shared` by default).
    public init(_ key: SyncKey<Value>, coordinator: SyncCoordinator = Zephyr.shared) {
      self.key = key
      self.coordinator = coordinator
    }

    /// The key's value; setting it writes `UserDefaults` and pushes the key.
    public var wrappedValue: Value {
      get { model.value }
      nonmutating set { model.value = newValue }
    }

    /// A binding to the key's value, for controls: `$theme`.
    public var projectedValue: Binding<Value> {
      Bindable(model).value
    }

    /// The view's model of the key, created on first use and kept in `@State`: SwiftUI
    /// may create the property many times, and only the first storage is kept.
    private var model: SyncedValue<Value> {
      storage.model(of: key, on: coordinator)
    }
  }

  /// Holds a view's `SyncedValue`, created lazily so that the copies of
  /// `@State`'s initial value SwiftUI discards never subscribe to anything.
  @MainActor
  final class ModelStorage<Value: SyncValue> {
    private var created: SyncedValue<Value>?

    func model(of key: SyncKey<Value>, on coordinator: SyncCoordinator) -> SyncedValue<Value> {
      if let created { return created }
      let model = SyncedValue(key, coordinator: coordinator)
      created = model
      return model
    }
  }
#endif

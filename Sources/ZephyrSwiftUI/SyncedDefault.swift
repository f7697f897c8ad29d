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
  /// A thin layer over `SyncedValue`: the view keeps a model of the key (in `@State`),
  /// reads ``wrappedValue`` from it (so the Observation framework tracks it), and writes
  /// through it, which writes `UserDefaults` and pushes the key. Changes from other
  /// devices are applied on the main actor. When the view is given another key or
  /// coordinator while SwiftUI keeps its state (a `NavigationSplitView` detail showing
  /// `DetailView(key: selection)`), the model is rebuilt for the new key.
  ///
  /// Like `@AppStorage`, it stores plain property-list values under the key's name, so
  /// `@AppStorage("theme")` and `@SyncedDefault(Settings.theme)` see the same value, and
  /// a value registered with `register(defaults:)` reads as it does there.
  @MainActor
  @propertyWrapper
  public struct SyncedDefault<Value: SyncValue>: DynamicProperty {
    // `DynamicProperty.update()` is left to SwiftUI's default: no main-actor member
    // witnesses a requirement of the protocol, which is not main-actor isolated in every
    // SDK this package supports.
    @State private var storage = ModelStorage<Value>()
    private let key: SyncKey<Value>
    private let coordinator: SyncCoordinator

    /// A property for `key` on `coordinator` (`Zephyr.shared` by default).
    ///
    /// Nonisolated, so that a view's initializer can create it whatever its isolation
    /// (a `View` is main-actor isolated only in newer SDKs); the model behind it is
    /// created on first use, on the main actor.
    public nonisolated init(_ key: SyncKey<Value>, coordinator: SyncCoordinator = Zephyr.shared) {
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

    /// The view's model of the key, kept in `@State` across the view's updates and
    /// rebuilt when the key or coordinator changes.
    private var model: SyncedValue<Value> {
      storage.model(of: key, on: coordinator)
    }
  }

  /// Holds a view's `SyncedValue`, created lazily so that the copies of `@State`'s
  /// initial value SwiftUI discards never subscribe to anything.
  @MainActor
  final class ModelStorage<Value: SyncValue> {
    private var created: SyncedValue<Value>?

    nonisolated init() {}

    /// The model of `key` on `coordinator`: the one made before when it follows the same
    /// key (by name) on the same coordinator, else a new one, which replaces it.
    func model(of key: SyncKey<Value>, on coordinator: SyncCoordinator) -> SyncedValue<Value> {
      if let created, created.key.name == key.name, created.coordinator === coordinator {
        return created
      }
      let model = SyncedValue(key, coordinator: coordinator)
      created = model
      return model
    }
  }
#endif

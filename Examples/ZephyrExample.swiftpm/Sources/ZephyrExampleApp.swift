import SwiftUI
import Zephyr

/// The app: three tabs over one shared coordinator (`Zephyr.shared`), synced each time a
/// scene becomes active.
@main
struct ZephyrExampleApp: App {
  @Environment(\.scenePhase) private var scenePhase

  var body: some Scene {
    WindowGroup {
      TabView {
        ArticlesView()
          .tabItem { Label("Articles", systemImage: "newspaper") }
        SettingsView()
          .tabItem { Label("Settings", systemImage: "gear") }
        StatusView()
          .tabItem { Label("Sync", systemImage: "icloud") }
      }
    }
    .onChange(of: scenePhase, initial: true) { _, phase in
      // At launch and on every return to the foreground: reconcile the app's defaults with
      // iCloud in both directions. Returns once pulled values are in UserDefaults.
      if phase == .active { Zephyr.sync() }
    }
  }
}

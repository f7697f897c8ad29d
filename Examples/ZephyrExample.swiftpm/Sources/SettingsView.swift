import SwiftUI
import Zephyr
import ZephyrSwiftUI

/// Settings as typed keys: each control reads and writes one synced key through
/// `@SyncedDefault`, and shows another device's change as it arrives.
struct SettingsView: View {
  @SyncedDefault(Settings.theme) private var theme
  @SyncedDefault(Settings.fontSize) private var fontSize
  @SyncedDefault(Settings.hidesRead) private var hidesRead
  @SyncedDefault(Settings.nickname) private var nickname

  var body: some View {
    NavigationStack {
      Form {
        Picker("Theme", selection: $theme) {
          ForEach(Theme.allCases) { theme in
            Text(theme.rawValue.capitalized).tag(theme)
          }
        }
        LabeledContent("Text size: \(Int(fontSize)) pt") {
          Slider(value: $fontSize, in: 12...28, step: 1)
        }
        Toggle("Hide articles already read", isOn: $hidesRead)
        TextField("Nickname", text: nicknameText)
        Button("Forget the nickname", role: .destructive) {
          Zephyr.removeValue(for: Settings.nickname)  // a synced delete: gone on every device
        }
        .disabled(nickname == nil)
      }
      .navigationTitle("Settings")
    }
    .preferredColorScheme(theme.colorScheme)
  }

  /// The nickname as text; an empty field removes it.
  private var nicknameText: Binding<String> {
    Binding(
      get: { nickname ?? "" },
      set: { nickname = $0.isEmpty ? nil : $0 })
  }
}

extension Theme {
  /// The color scheme to force, or `nil` to follow the system.
  var colorScheme: ColorScheme? {
    switch self {
    case .system: nil
    case .light: .light
    case .dark: .dark
    }
  }
}

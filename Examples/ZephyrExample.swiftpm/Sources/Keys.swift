import Zephyr

/// Every synced setting, declared once with its type and default.
enum Settings {
  /// How articles are shown.
  static let theme = SyncKey<Theme>("theme", default: .system)
  /// The reading text size, in points.
  static let fontSize = SyncKey<Double>("fontSize", default: 17)
  /// Whether the list hides articles already read.
  static let hidesRead = SyncKey<Bool>("hidesRead", default: false)
  /// The name shown in the greeting; `nil` until the person sets one (setting it back to
  /// `nil` is a synced delete).
  static let nickname = SyncKey<String?>("nickname")
}

/// The collections: edited an element at a time, merged so that no edit is lost when two
/// devices make edits before they hear of each other's.
enum Library {
  /// Favorite articles by slug. `.set`: a favorite added on either device stays, one
  /// removed by a device that had seen it goes.
  static let favorites = SyncKey<[String]>("favorites", default: [], merge: .set)
  /// Articles read, by id, packed near the fewest bytes the ids can take; the newest 5,000
  /// are kept, trimmed the same way on every device.
  static let readHistory = SyncKey<PackedSet<UInt32>>(
    "readHistory", default: [], merge: .set(capacity: 5_000))
}

/// A `RawRepresentable` setting: declaring `SyncValue` is all it takes.
enum Theme: String, SyncValue, CaseIterable, Identifiable {
  case system, light, dark

  var id: Self { self }
}

import Foundation
import Zephyr

/// What ``AppleFaithfulDefaults`` holds while protected data is unavailable: the writes the
/// process made meanwhile, kept in memory, and the folders moved out of reach.
struct ProtectedDataEmulation: Sendable {
  /// One write made while unavailable: a value, or a removal.
  enum Held: Sendable {
    case value(PropertyListValue)
    case removed
  }

  var isAvailable = true
  /// Writes made meanwhile, by key, in memory only.
  var held: [String: Held] = [:]
  /// Whether a `setPersistentDomain` or `removePersistentDomain` replaced the whole domain
  /// meanwhile: then ``held`` is the whole domain.
  var replacedDomain = false
  /// Folders unreadable while unavailable.
  var directories: [URL] = []

  /// The values the process sees meanwhile: only what it wrote itself.
  var visibleValues: [String: PropertyListValue] {
    held.compactMapValues { if case .value(let value) = $0 { value } else { nil } }
  }

  /// Where a folder is kept while it is out of reach.
  static func hiddenURL(of directory: URL) -> URL {
    directory.deletingLastPathComponent().appendingPathComponent(directory.lastPathComponent + ".protected")
  }

  /// Where a folder created at a protected folder's path while it was out of reach is put
  /// when the data becomes available again: evidence that something wrote there.
  static func writtenWhileUnavailableURL(of directory: URL) -> URL {
    directory.deletingLastPathComponent().appendingPathComponent(
      directory.lastPathComponent + ".written-while-unavailable")
  }

  /// Moves the folders out of reach (a missing folder reads like an unreadable one: no file
  /// in it can be opened).
  static func hide(_ directories: [URL]) {
    let files = FileManager.default
    for directory in directories where files.fileExists(atPath: directory.path) {
      try? files.removeItem(at: hiddenURL(of: directory))
      try? files.moveItem(at: directory, to: hiddenURL(of: directory))
    }
  }

  /// Brings the folders back; whatever was created at their paths meanwhile is set aside
  /// at ``writtenWhileUnavailableURL(of:)``.
  static func restore(_ directories: [URL]) {
    let files = FileManager.default
    for directory in directories {
      if files.fileExists(atPath: directory.path) {
        try? files.removeItem(at: writtenWhileUnavailableURL(of: directory))
        try? files.moveItem(at: directory, to: writtenWhileUnavailableURL(of: directory))
      }
      if files.fileExists(atPath: hiddenURL(of: directory).path) {
        try? files.moveItem(at: hiddenURL(of: directory), to: directory)
      }
    }
  }
}

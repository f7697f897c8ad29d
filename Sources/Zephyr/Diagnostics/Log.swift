import Foundation

#if canImport(os)
  import os
#endif

/// One line of Zephyr's log, as a ``LogHandler`` receives it.
///
/// Decisions (`push theme g7 "dusk" (local edit)`) are ``Level-swift.enum/debug``;
/// anything a developer should act on (`refused key …: key is 71 bytes > 64`) is a
/// ``Level-swift.enum/warning``.
public struct LogMessage: Sendable, Equatable, CustomStringConvertible {
  /// How much a message matters.
  public enum Level: String, Sendable, Equatable {
    /// A decision, logged only when ``SyncConfiguration/debugEnabled`` is on:
    /// `pull font g4 "Avenir" (remote newer)`.
    case debug
    /// Something the developer should act on, always logged: `refused key …: 71 bytes > 64`.
    case warning
  }

  /// How much the message matters.
  public var level: Level
  /// The message, written as a decision a developer can act on.
  public var text: String
  /// ``text`` with every synced value replaced by `<private>`: keys, generations and
  /// reasons stay. What the default sink logs as public on Apple platforms; the values
  /// go to the unified log as private data.
  public var redactedText: String

  /// Creates a message; `redactedText` defaults to `text` (a message without values).
  public init(level: Level, text: String, redactedText: String? = nil) {
    self.level = level
    self.text = text
    self.redactedText = redactedText ?? text
  }

  /// `"[Zephyr] text"`, with `warning:` before warnings.
  public var description: String {
    level == .warning ? "[Zephyr] warning: \(text)" : "[Zephyr] \(text)"
  }
}

/// Receives Zephyr's log messages; see ``SyncConfiguration/logHandler``. Called after the
/// coordinator released its lock, so it may call back into the coordinator.
public typealias LogHandler = @Sendable (LogMessage) -> Void

/// Where messages go when no ``LogHandler`` is set.
enum DefaultLogSink {
  static func write(_ message: LogMessage) {
    #if canImport(os)
      // Keys public, values private (shown as <private> unless private data is enabled).
      let logger = Logger(subsystem: "Zephyr", category: "sync")
      let hasValues = message.redactedText != message.text
      switch (message.level, hasValues) {
      case (.debug, false): logger.debug("\(message.text, privacy: .public)")
      case (.debug, true):
        logger.debug("\(message.redactedText, privacy: .public) \(message.text, privacy: .private)")
      case (.warning, false): logger.warning("\(message.text, privacy: .public)")
      case (.warning, true):
        logger.warning("\(message.redactedText, privacy: .public) \(message.text, privacy: .private)")
      }
    #else
      FileHandle.standardError.write(Data((message.description + "\n").utf8))
    #endif
  }
}

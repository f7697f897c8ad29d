import Foundation

/// Marks, on the current thread only, the coordinator whose `UserDefaults` write is in
/// progress, and counts the `didChangeNotification`s that reach that coordinator on this
/// thread meanwhile: how Zephyr recognises its own writes' echoes without a lock.
enum OwnWriteMarker {
  private static let writer = ThreadLocalInt()
  private static let echoes = ThreadLocalInt()

  private static func token(_ coordinator: ObjectIdentifier) -> Int {
    Int(bitPattern: UInt(bitPattern: coordinator))
  }

  /// Runs `write` marked as `coordinator`'s own; returns how many announcements of it
  /// arrived on this thread during the write. Nests: a write made from inside another
  /// (an observer of the outer write setting a typed key) is counted apart, and the
  /// outer write's marker and count are restored after it.
  static func write(by coordinator: ObjectIdentifier, _ write: () -> Void) -> Int {
    let outer = (writer: writer.value, echoes: echoes.value)
    writer.value = token(coordinator)
    echoes.value = 0
    write()
    let counted = echoes.value
    writer.value = outer.writer
    echoes.value = outer.echoes
    return counted
  }

  /// Counts an announcement for `coordinator` when this thread is inside its write;
  /// returns whether it was.
  static func noteAnnouncement(for coordinator: ObjectIdentifier) -> Bool {
    guard writer.value == token(coordinator) else { return false }
    echoes.value += 1
    return true
  }
}

/// Zephyr's own `UserDefaults` writes and the `didChangeNotification`s that reached their
/// coordinator on the writing thread while it made them (``OwnWriteMarker``): one count
/// for an operation's writes and a typed set alike.
struct OwnWrites: Sendable, Equatable {
  var writes = 0
  var announcements = 0

  /// Whether more announcements arrived than writes were made: an observer edited the
  /// suite from inside one of them (a write announces itself once, where it announces at
  /// all), and that edit is Zephyr's to push.
  var includeOtherEdits: Bool { announcements > writes }

  static func += (total: inout OwnWrites, more: OwnWrites) {
    total.writes += more.writes
    total.announcements += more.announcements
  }
}

import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A small number naming the current thread, unique for the process's life. Unlike a
/// task-local value it is never inherited: a `Task {}` or a block on another queue started
/// from inside an operation runs on another thread and is told apart.
enum ThreadIdentity {
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }()
  private static let counter = Locked(0)

  /// The current thread's number, assigned on first use.
  static var current: Int {
    let stored = Int(bitPattern: pthread_getspecific(key))
    if stored != 0 { return stored }
    let assigned = counter.withLock { count -> Int in
      count += 1
      return count
    }
    pthread_setspecific(key, UnsafeRawPointer(bitPattern: assigned))
    return assigned
  }
}

/// Marks, on the current thread only, the coordinator whose `UserDefaults` write is in
/// progress, and counts the `didChangeNotification`s that reach that coordinator on this
/// thread meanwhile: how Zephyr recognises its own writes' echoes without a lock. Thread
/// storage is never inherited by a `Task` or another queue.
enum OwnWriteMarker {
  private static let writerKey = makeKey()
  private static let echoKey = makeKey()

  private static func makeKey() -> pthread_key_t {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
  }

  private static func token(_ coordinator: ObjectIdentifier) -> Int {
    Int(bitPattern: UInt(bitPattern: coordinator))
  }

  /// Runs `write` marked as `coordinator`'s own; returns how many announcements of it
  /// arrived on this thread during the write.
  static func write(by coordinator: ObjectIdentifier, _ write: () -> Void) -> Int {
    pthread_setspecific(writerKey, UnsafeRawPointer(bitPattern: token(coordinator)))
    pthread_setspecific(echoKey, nil)
    write()
    let echoes = Int(bitPattern: pthread_getspecific(echoKey))
    pthread_setspecific(writerKey, nil)
    pthread_setspecific(echoKey, nil)
    return echoes
  }

  /// Counts an announcement for `coordinator` when this thread is inside its write;
  /// returns whether it was.
  static func noteAnnouncement(for coordinator: ObjectIdentifier) -> Bool {
    guard Int(bitPattern: pthread_getspecific(writerKey)) == token(coordinator) else { return false }
    let echoes = Int(bitPattern: pthread_getspecific(echoKey)) + 1
    pthread_setspecific(echoKey, UnsafeRawPointer(bitPattern: echoes))
    return true
  }
}

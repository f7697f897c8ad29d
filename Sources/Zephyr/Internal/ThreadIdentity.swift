import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// One integer per thread, 0 until set: thread storage, which, unlike a task-local value,
/// a `Task` or a block on another queue never inherits.
struct ThreadLocalInt: Sendable {
  private let key: pthread_key_t

  init() {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    self.key = key
  }

  /// The current thread's value.
  var value: Int {
    get { Int(bitPattern: pthread_getspecific(key)) }
    nonmutating set { pthread_setspecific(key, UnsafeRawPointer(bitPattern: newValue)) }
  }
}

/// A small number naming the current thread, unique for the process's life: a `Task {}`
/// or a block on another queue started from inside an operation runs on another thread
/// and is told apart.
enum ThreadIdentity {
  private static let number = ThreadLocalInt()
  private static let counter = Locked(0)

  /// The current thread's number, assigned on first use.
  static var current: Int {
    if number.value != 0 { return number.value }
    let assigned = counter.withLock { count -> Int in
      count += 1
      return count
    }
    number.value = assigned
    return assigned
  }
}

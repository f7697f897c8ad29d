import Foundation
import Zephyr

/// A `UserDefaults` that announces its writes the way Apple documents, on every platform.
///
/// Apple documents `UserDefaults.didChangeNotification` as "Posted when the current process
/// changes the value of a setting": "When you write a new value to a setting, or remove an
/// existing value, the system generates this notification to alert you that your app's
/// settings changed. [...] The system posts this notification on the same thread you used
/// to make the change."
/// (<https://developer.apple.com/documentation/foundation/userdefaults/didchangenotification>).
/// The pages of `set(_:forKey:)` and its typed overloads, `removeObject(forKey:)` and
/// `setPersistentDomain(_:forName:)` each add "the system generates a
/// `didChangeNotification` for registered observers".
///
/// swift-corelibs-foundation (Linux, Windows) posts it only from `setPersistentDomain` and
/// `removePersistentDomain`. This subclass closes the gap, so that code which reacts to local
/// edits can be tested on Linux against the behaviour it meets on Apple platforms:
///
/// - Every call of a write entry point — ``set(_:forKey:)-(Any?,_)``, the typed overloads
///   for `Int`, `Float`, `Double`, `Bool` and `URL?`, ``removeObject(forKey:)``,
///   ``setPersistentDomain(_:forName:)`` and ``removePersistentDomain(forName:)`` — performs
///   the write and then posts `didChangeNotification` **exactly once**, with this instance
///   as the object and no `userInfo`, **synchronously on the calling thread**: every
///   observer has run by the time the call returns.
/// - Exactly once holds however Foundation implements the call. A write that Foundation
///   routes through another overridden entry point (on Linux `set(_: Int, forKey:)` calls
///   `set(_: Any?, forKey:)`, and so does `set(_: Any?, forKey:)` itself for a `URL`) posts
///   once, for the outer call. A call during which Foundation already posted for this
///   instance (on Linux, the persistent-domain calls; on Apple platforms, every write) gets
///   no second post from this class.
/// - Writes to another instance, even of the same suite, post with that instance as the
///   object, never with this one.
/// - `set(nil, forKey:)` (and `set(nil as URL?, forKey:)`) removes the key, as Apple
///   documents; it never reaches Foundation's `set(nil, forKey:)`, which on Linux does not
///   return.
/// - An observer may write to this or any other instance, from the notification, on any
///   thread: no lock is held while Foundation is called or while the notification is posted.
///
/// Not emulated: `register(defaults:)` posts nothing (Apple documents no notification for
/// the registration domain, and neither platform posts one); the volatile-domain methods
/// post nothing (Apple documents a notification for them, corelibs does not post it, and
/// corelibs calls `setVolatileDomain` from its initializer); ``UserDefaults/standard`` stays
/// the plain shared instance — create `AppleFaithfulDefaults(suiteName: nil)` for the
/// application domain. Changes made by another process are never announced (Apple: "If a
/// different process changes your app's settings, the system doesn't generate this
/// notification").
///
/// On Linux, swift-corelibs-foundation marks `UserDefaults` as not `Sendable`, and this
/// subclass inherits that; on Apple platforms it inherits the SDK's `Sendable`. Its own
/// state (``writeInterceptor``) is guarded by a lock, so an instance may be shared between
/// threads wherever a `UserDefaults` may.
public final class AppleFaithfulDefaults: UserDefaults {
  /// One write, as ``writeInterceptor`` sees it: what the call is about to change.
  public enum Write: Sendable, Hashable {
    /// `key` is about to be given a value (by `set(_:forKey:)` or a typed overload).
    case set(key: String)
    /// `key` is about to be removed (by `removeObject(forKey:)`, or `set(nil, forKey:)`).
    case remove(key: String)
    /// The persistent domain `name` is about to be replaced (`setPersistentDomain`).
    case setPersistentDomain(name: String)
    /// The persistent domain `name` is about to be emptied (`removePersistentDomain`).
    case removePersistentDomain(name: String)
  }

  /// A test-only fault hook, consulted once before each write call; `nil` (the default)
  /// lets every write through.
  ///
  /// When it returns `false`, the write is dropped: nothing is written and no
  /// `didChangeNotification` is posted, as when a process dies just before the write. A
  /// write that Foundation performs on behalf of an outer call (see the type's discussion)
  /// is not offered again. The hook runs on the writing thread, outside any lock; it may
  /// read or write this instance (a write from the hook is offered to the hook in turn).
  /// Reading and setting the property is thread-safe.
  public var writeInterceptor: (@Sendable (Write) -> Bool)? {
    get { interceptor.withLock { $0 } }
    set { interceptor.withLock { $0 = newValue } }
  }

  private let interceptor = Locked<(@Sendable (Write) -> Bool)?>(nil)

  /// Creates defaults for the suite `suiteName`, or, when `nil`, for the current app's
  /// settings (Apple: "If you specify `nil`, this method returns a defaults object that
  /// reads and writes from the current app's settings").
  ///
  /// Returns `nil` where Foundation does. Apple says of `suiteName`: "Don't specify the
  /// `globalDomain` or your app's bundle identifier"; corelibs never fails. Instances of one
  /// suite share their values, but each posts only for its own writes.
  public override init?(suiteName: String?) {
    Self.installPostProbe()
    super.init(suiteName: suiteName)
  }

  // MARK: - Writes

  /// Sets `key` to the property-list `value`, then posts `didChangeNotification` (Apple:
  /// "After you call this method, the system generates a `didChangeNotification` for
  /// registered observers").
  ///
  /// A `nil` value, or an `Optional` holding `nil` passed as `Any`, removes the key and is
  /// offered to ``writeInterceptor`` as ``Write/remove(key:)``.
  public override func set(_ value: Any?, forKey defaultName: String) {
    guard let value, let value = PropertyListValue.unwrapOptionals(value) else {
      perform(.remove(key: defaultName)) { super.removeObject(forKey: defaultName) }
      return
    }
    perform(.set(key: defaultName)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to the integer `value` (stored as a number), then posts
  /// `didChangeNotification` once.
  public override func set(_ value: Int, forKey defaultName: String) {
    perform(.set(key: defaultName)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to the float `value` (stored as a number), then posts
  /// `didChangeNotification` once.
  public override func set(_ value: Float, forKey defaultName: String) {
    perform(.set(key: defaultName)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to the double `value` (stored as a number), then posts
  /// `didChangeNotification` once.
  public override func set(_ value: Double, forKey defaultName: String) {
    perform(.set(key: defaultName)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to the Boolean `value` (stored as a number), then posts
  /// `didChangeNotification` once.
  public override func set(_ value: Bool, forKey defaultName: String) {
    perform(.set(key: defaultName)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to `url` as Foundation stores URLs (on Linux, the path only), then posts
  /// `didChangeNotification` once. A `nil` URL removes the key, as ``removeObject(forKey:)``.
  public override func set(_ url: URL?, forKey defaultName: String) {
    guard let url else {
      perform(.remove(key: defaultName)) { super.removeObject(forKey: defaultName) }
      return
    }
    perform(.set(key: defaultName)) { super.set(url, forKey: defaultName) }
  }

  /// Removes `key` from this suite's persistent domain, then posts `didChangeNotification`
  /// (Apple: "After you remove the key, the system generates a `didChangeNotification` for
  /// registered observers"). Posts even when the key had no value: one call, one post.
  public override func removeObject(forKey defaultName: String) {
    perform(.remove(key: defaultName)) { super.removeObject(forKey: defaultName) }
  }

  /// Replaces the persistent domain `domainName` with `domain`, then posts
  /// `didChangeNotification` once (Apple: "This method removes the existing keys from the
  /// specified domain and then adds the new keys you provide. After updating the keys, this
  /// method generates a `didChangeNotification` for registered observers").
  ///
  /// On Linux, Foundation posts this notification itself; this class then adds none.
  public override func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
    perform(.setPersistentDomain(name: domainName), foundationMayReenter: false) {
      super.setPersistentDomain(domain, forName: domainName)
    }
  }

  /// Removes every key of the persistent domain `domainName`, then posts
  /// `didChangeNotification` once.
  ///
  /// On Linux, Foundation posts this notification itself; this class then adds none.
  public override func removePersistentDomain(forName domainName: String) {
    perform(.removePersistentDomain(name: domainName), foundationMayReenter: false) {
      super.removePersistentDomain(forName: domainName)
    }
  }

  // MARK: - One call, one post

  /// Runs one write call: offers `write` to the interceptor, runs `body` (the call into
  /// Foundation) and posts `didChangeNotification` unless Foundation posted for this
  /// instance during `body`.
  ///
  /// With `foundationMayReenter`, a call of an overridden write made from inside `body`
  /// before any post is Foundation's own routing (`set(Int)` calling `set(Any?)`): it runs
  /// its Foundation body directly, without interceptor or post. Any other nested call (an
  /// observer writing back from Foundation's post) is a call of its own.
  private func perform(_ write: Write, foundationMayReenter: Bool = true, _ body: () -> Void) {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    let me = ObjectIdentifier(self)
    if let outer = WriteScope.current, outer.owner == me, outer.absorbsReentry, outer.posts == 0 {
      body()
      return
    }
    guard writeInterceptor?(write) ?? true else { return }
    let scope = WriteScope(owner: me, absorbsReentry: foundationMayReenter)
    WriteScope.$current.withValue(scope) { body() }
    if scope.posts == 0 {
      NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
    }
  }

  /// Registers, once per process, the observer that counts the posts Foundation makes for
  /// the instance whose write call is running on the posting thread.
  private static func installPostProbe() {
    _ = postProbe
  }

  /// The process-wide observer behind ``installPostProbe()``. It is never removed: it holds
  /// no instance, and costs one task-local read per `didChangeNotification`.
  private static let postProbe: Void = {
    _ = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: nil, queue: nil
    ) { notification in
      guard let scope = WriteScope.current, let object = notification.object as? UserDefaults,
        ObjectIdentifier(object) == scope.owner
      else { return }
      scope.recordPost()
    }
  }()

}

/// The write call running on this thread (or task), and the posts seen for its instance.
private final class WriteScope: Sendable {
  /// The innermost write call in progress, bound for the duration of its Foundation call.
  @TaskLocal static var current: WriteScope?

  /// The instance written to.
  let owner: ObjectIdentifier
  /// Whether a nested write to `owner` before any post is Foundation routing the call.
  let absorbsReentry: Bool
  private let postCount = Locked(0)

  init(owner: ObjectIdentifier, absorbsReentry: Bool) {
    self.owner = owner
    self.absorbsReentry = absorbsReentry
  }

  /// How many `didChangeNotification`s for `owner` were posted during the call so far.
  var posts: Int { postCount.withLock { $0 } }

  func recordPost() {
    postCount.withLock { $0 += 1 }
  }
}

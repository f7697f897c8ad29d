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
///
/// ## Before the first unlock
///
/// Set ``isProtectedDataAvailable`` to `false` to model a launch before the first unlock
/// after a restart (or a prewarmed launch then). Apple documents that files protected
/// until first user authentication — the default class of an app's container, which
/// `UserDefaults`' own file has — cannot be read until the person unlocks the device, and
/// `UIApplication.isProtectedDataAvailable` is `false` meanwhile. It documents nothing
/// about `UserDefaults` writes in that state; developers report (Christian Selig, "Beware
/// UserDefaults", 2024, and others since iOS 15's prewarming) that reads return nothing
/// and that a value written then is kept in memory and later saved over the stored one.
/// So, while unavailable:
///
/// - Reads (`object(forKey:)` and the typed getters built on it, `persistentDomain(forName:)`,
///   `dictionaryRepresentation()`) return only what this instance wrote meanwhile: the
///   stored values are invisible.
/// - Writes are kept in memory, announced as usual, and written over the stored values
///   when the data becomes available: a write made then replaces what was stored, as on a
///   device.
/// - The folders in ``protectedDirectories`` are out of reach: moved aside, so nothing in
///   them can be opened. Whatever is created at their paths meanwhile is moved to
///   `<folder>.written-while-unavailable` when they come back, for a test to find.
/// - Setting it posts `UIApplicationProtectedDataWillBecomeUnavailable`, and setting it
///   back `UIApplicationProtectedDataDidBecomeAvailable`, on `NotificationCenter.default`
///   with this instance as the object, as iOS posts them: a `SyncCoordinator` over this
///   suite hears them, and asks ``isProtectedDataAvailable`` before every operation
///   (``ProtectedDataReporting``). Flipping the switch is all a test does.
public final class AppleFaithfulDefaults: UserDefaults, ProtectedDataReporting {
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
  private let readActions = Locked<[@Sendable () -> Void]>([])

  /// Runs `action` once, from inside the next read of this instance (`object(forKey:)`,
  /// `persistentDomain(forName:)` or `dictionaryRepresentation()`), on the reading thread,
  /// after the read and before it returns: something another thread does, and makes the
  /// reader wait for, while Zephyr reads the suite (a store delivering a change, whose
  /// observers it waits for).
  ///
  /// ```swift
  /// defaults.duringNextRead { cloud.download(to: "A") }
  /// coordinator.sync()   // must not make the store's thread wait for this very read
  /// ```
  public func duringNextRead(_ action: @escaping @Sendable () -> Void) {
    readActions.withLock { $0.append(action) }
  }
  private let protection = Locked(ProtectedDataEmulation())

  /// Whether protected data is available: `true` by default; `false` models the device
  /// before its first unlock (see the type's discussion). Becoming available writes what
  /// was written meanwhile over the stored values and brings ``protectedDirectories``
  /// back; then the notification is posted, on the setting thread, with no lock held.
  public var isProtectedDataAvailable: Bool {
    get { protection.withLock { $0.isAvailable } }
    set { setProtectedDataAvailable(newValue) }
  }

  /// Folders that cannot be read while protected data is unavailable, such as a
  /// coordinator's ledger folder (``SyncConfiguration/ledgerDirectory``). Set it while the
  /// data is available.
  public var protectedDirectories: [URL] {
    get { protection.withLock { $0.directories } }
    set { protection.withLock { $0.directories = newValue } }
  }

  /// Creates defaults for the suite `suiteName`, or, when `nil`, for the current app's
  /// settings (Apple: "If you specify `nil`, this method returns a defaults object that
  /// reads and writes from the current app's settings").
  ///
  /// Returns `nil` where Foundation does. Apple says of `suiteName`: "Don't specify the
  /// `globalDomain` or your app's bundle identifier"; corelibs never fails. Instances of one
  /// suite share their values, but each posts only for its own writes.
  public override init?(suiteName: String?) {
    Self.installPostProbe()
    suiteNameForProtectedData = suiteName ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    super.init(suiteName: suiteName)
  }

  /// The persistent domain a whole-domain write made while protected data was unavailable
  /// is saved to.
  private let suiteNameForProtectedData: String

  // MARK: - Reads

  /// The value of `key`; while protected data is unavailable, only a value this instance
  /// wrote meanwhile.
  public override func object(forKey defaultName: String) -> Any? {
    if let hidden = whileUnavailable({ $0.visibleValues[defaultName] }) { return hidden?.foundationValue }
    return afterRead(super.object(forKey: defaultName))
  }

  /// The persistent domain `domainName`; while protected data is unavailable, only what
  /// this instance wrote meanwhile.
  public override func persistentDomain(forName domainName: String) -> [String: Any]? {
    if let hidden = whileUnavailable({ $0.visibleValues }) { return hidden.mapValues(\.foundationValue) }
    return afterRead(super.persistentDomain(forName: domainName))
  }

  /// Every visible value; while protected data is unavailable, only what this instance
  /// wrote meanwhile.
  public override func dictionaryRepresentation() -> [String: Any] {
    if let hidden = whileUnavailable({ $0.visibleValues }) { return hidden.mapValues(\.foundationValue) }
    return afterRead(super.dictionaryRepresentation())
  }

  /// Runs the actions ``duringNextRead(_:)`` armed, then returns `result`.
  private func afterRead<Result>(_ result: Result) -> Result {
    let actions = readActions.withLock { actions in
      defer { actions = [] }
      return actions
    }
    guard !actions.isEmpty else { return result }
    LockAudit.assertNoLockHeld(calling: "an action inside a UserDefaults read")
    for action in actions { action() }
    return result
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
      perform(.remove(key: defaultName), holding: .removed) { super.removeObject(forKey: defaultName) }
      return
    }
    perform(.set(key: defaultName), holding: Self.held(value)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to the integer `value` (stored as a number), then posts
  /// `didChangeNotification` once.
  public override func set(_ value: Int, forKey defaultName: String) {
    perform(.set(key: defaultName), holding: Self.held(value)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to the float `value` (stored as a number), then posts
  /// `didChangeNotification` once.
  public override func set(_ value: Float, forKey defaultName: String) {
    perform(.set(key: defaultName), holding: Self.held(value)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to the double `value` (stored as a number), then posts
  /// `didChangeNotification` once.
  public override func set(_ value: Double, forKey defaultName: String) {
    perform(.set(key: defaultName), holding: Self.held(value)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to the Boolean `value` (stored as a number), then posts
  /// `didChangeNotification` once.
  public override func set(_ value: Bool, forKey defaultName: String) {
    perform(.set(key: defaultName), holding: Self.held(value)) { super.set(value, forKey: defaultName) }
  }

  /// Sets `key` to `url` as Foundation stores URLs (on Linux, the path only), then posts
  /// `didChangeNotification` once. A `nil` URL removes the key, as ``removeObject(forKey:)``.
  public override func set(_ url: URL?, forKey defaultName: String) {
    guard let url else {
      perform(.remove(key: defaultName), holding: .removed) { super.removeObject(forKey: defaultName) }
      return
    }
    perform(.set(key: defaultName), holding: Self.held(url.path)) { super.set(url, forKey: defaultName) }
  }

  /// Removes `key` from this suite's persistent domain, then posts `didChangeNotification`
  /// (Apple: "After you remove the key, the system generates a `didChangeNotification` for
  /// registered observers"). Posts even when the key had no value: one call, one post.
  public override func removeObject(forKey defaultName: String) {
    perform(.remove(key: defaultName), holding: .removed) { super.removeObject(forKey: defaultName) }
  }

  /// Replaces the persistent domain `domainName` with `domain`, then posts
  /// `didChangeNotification` once (Apple: "This method removes the existing keys from the
  /// specified domain and then adds the new keys you provide. After updating the keys, this
  /// method generates a `didChangeNotification` for registered observers").
  ///
  /// On Linux, Foundation posts this notification itself; this class then adds none.
  public override func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
    perform(.setPersistentDomain(name: domainName), holdingDomain: domain, foundationMayReenter: false) {
      super.setPersistentDomain(domain, forName: domainName)
    }
  }

  /// Removes every key of the persistent domain `domainName`, then posts
  /// `didChangeNotification` once.
  ///
  /// On Linux, Foundation posts this notification itself; this class then adds none.
  public override func removePersistentDomain(forName domainName: String) {
    perform(.removePersistentDomain(name: domainName), holdingDomain: [:], foundationMayReenter: false) {
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
  ///
  /// While protected data is unavailable, the write is kept in memory instead (`holding`
  /// one key, or `holdingDomain`, a whole domain) and announced.
  private func perform(
    _ write: Write, holding: ProtectedDataEmulation.Held? = nil, holdingDomain: [String: Any]? = nil,
    foundationMayReenter: Bool = true, _ body: () -> Void
  ) {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    let me = ObjectIdentifier(self)
    if let outer = WriteScope.current, outer.owner == me, outer.absorbsReentry, outer.posts == 0 {
      body()
      return
    }
    guard writeInterceptor?(write) ?? true else { return }
    if hold(write, holding, holdingDomain) {
      NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
      return
    }
    let scope = WriteScope(owner: me, absorbsReentry: foundationMayReenter)
    WriteScope.$current.withValue(scope) { body() }
    if scope.posts == 0 {
      NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: self)
    }
  }

  // MARK: - Protected data

  /// `read` of the writes held meanwhile while protected data is unavailable; `nil` when
  /// it is available.
  private func whileUnavailable<Result: Sendable>(_ read: (ProtectedDataEmulation) -> Result) -> Result? {
    protection.withLock { state in state.isAvailable ? nil : read(state) }
  }

  /// Keeps `write` in memory when protected data is unavailable; `false` when it is.
  private func hold(_ write: Write, _ held: ProtectedDataEmulation.Held?, _ domain: [String: Any]?) -> Bool {
    let domain = domain?.compactMapValues(PropertyListValue.init(bridging:))
    return protection.withLock { state in
      guard !state.isAvailable else { return false }
      if let domain {
        state.replacedDomain = true
        state.held = domain.mapValues { .value($0) }
      } else if let held, case .set(let key) = write {
        state.held[key] = held
      } else if let held, case .remove(let key) = write {
        state.held[key] = held
      }
      return true
    }
  }

  private func setProtectedDataAvailable(_ available: Bool) {
    LockAudit.assertNoLockHeld(calling: "UserDefaults")
    let change = protection.withLock {
      state -> (held: [String: ProtectedDataEmulation.Held], replaced: Bool, directories: [URL])? in
      guard state.isAvailable != available else { return nil }
      state.isAvailable = available
      defer {
        state.held = [:]
        state.replacedDomain = false
      }
      return (state.held, state.replacedDomain, state.directories)
    }
    guard let change else { return }
    if available {
      ProtectedDataEmulation.restore(change.directories)
      // What the process wrote meanwhile is saved over the stored values.
      if change.replaced {
        let name = suiteNameForProtectedData
        let values = change.held.compactMapValues { held -> Any? in
          if case .value(let value) = held { value.foundationValue } else { nil }
        }
        super.setPersistentDomain(values, forName: name)
      } else {
        for (key, held) in change.held.sorted(by: { $0.key < $1.key }) {
          switch held {
          case .value(let value): super.set(value.foundationValue, forKey: key)
          case .removed: super.removeObject(forKey: key)
          }
        }
      }
    } else {
      ProtectedDataEmulation.hide(change.directories)
    }
    let name =
      available ? "UIApplicationProtectedDataDidBecomeAvailable" : "UIApplicationProtectedDataWillBecomeUnavailable"
    NotificationCenter.default.post(name: Notification.Name(name), object: self)
  }

  /// A value as held while protected data is unavailable (a value that is not a property
  /// list is dropped, as Foundation would refuse it).
  private static func held(_ value: Any) -> ProtectedDataEmulation.Held? {
    PropertyListValue(bridging: value).map { .value($0) }
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

import Foundation
import Testing
import ZephyrTesting

@testable import Zephyr

/// `AppleFaithfulDefaults` posts `didChangeNotification` as Apple documents: once per write
/// call, synchronously, on the writing thread, with the instance written to as the object.
struct AppleFaithfulDefaultsTests {
  typealias Write = AppleFaithfulDefaults.Write

  // MARK: - One post per write, on the writing thread, before the call returns

  @Test(arguments: WriteCall.allCases)
  func eachWritePostsOnceSynchronouslyOnTheWritingThread(_ call: WriteCall) async throws {
    try await withSuite { suite, defaults in
      defaults.set("seed", forKey: "k")
      let log = PostLog(watching: [defaults])
      await log.recording {
        await onNewThread(marked: "writer", defaults) { defaults in
          log.during { call.perform(on: defaults, suite: suite) }
        }
      }
      #expect(log.posts == [PostLog.Post(object: ObjectIdentifier(defaults), thread: "writer", duringCall: true)])
      #expect(call.tookEffect(on: defaults), "\(call) did not write")
    }
  }

  @Test(arguments: WriteCall.allCases)
  func eachWriteIsOfferedToTheInterceptorOnce(_ call: WriteCall) async throws {
    try await withSuite { suite, defaults in
      defaults.set("seed", forKey: "k")
      let offered = Locked<[Write]>([])
      defaults.writeInterceptor = { write in
        offered.withLock { $0.append(write) }
        return true
      }
      call.perform(on: defaults, suite: suite)
      #expect(offered.withLock { $0 } == [call.expectedWrite(suite: suite)])
      #expect(call.tookEffect(on: defaults))
    }
  }

  @Test(arguments: WriteCall.allCases)
  func aDroppedWriteChangesNothingAndPostsNothing(_ call: WriteCall) async throws {
    try await withSuite { suite, defaults in
      defaults.set("seed", forKey: "k")
      let offered = Locked(0)
      defaults.writeInterceptor = { _ in
        offered.withLock { $0 += 1 }
        return false
      }
      let log = PostLog(watching: [defaults])
      await log.recording { call.perform(on: defaults, suite: suite) }
      #expect(log.posts.isEmpty)
      #expect(offered.withLock { $0 } == 1)
      defaults.writeInterceptor = nil
      #expect(defaults.string(forKey: "k") == "seed", "a dropped \(call) changed the suite")
    }
  }

  @Test func theInterceptorDropsOnlyTheWritesItRefuses() async throws {
    try await withSuite { _, defaults in
      defaults.writeInterceptor = { $0 != .set(key: "doomed") }
      let log = PostLog(watching: [defaults])
      await log.recording {
        defaults.set("lost", forKey: "doomed")
        defaults.set("kept", forKey: "safe")
        defaults.set(7, forKey: "doomed")
      }
      #expect(log.posts.count == 1)
      #expect(defaults.object(forKey: "doomed") == nil)
      #expect(defaults.string(forKey: "safe") == "kept")
      #expect(defaults.writeInterceptor != nil)
      defaults.writeInterceptor = nil
      #expect(defaults.writeInterceptor == nil)
    }
  }

  // MARK: - The object is the instance written to

  @Test func aSecondInstanceOfTheSuitePostsWithItselfOnly() async throws {
    try await withSuite { suite, first in
      let second = try #require(AppleFaithfulDefaults(suiteName: suite))
      let log = PostLog(watching: [first, second])
      await log.recording {
        second.set("from second", forKey: "k")
        second.set(3, forKey: "n")
        second.removeObject(forKey: "n")
        second.setPersistentDomain(["k": "replaced"], forName: suite)
      }
      #expect(log.posts.map(\.object) == Array(repeating: ObjectIdentifier(second), count: 4))
      #expect(first.string(forKey: "k") == "replaced", "both instances read one suite")
    }
  }

  @Test func aPlainUserDefaultsOfTheSuitePostsNothingForItsSetOnLinux() async throws {
    try await withSuite { suite, faithful in
      let plain = try #require(UserDefaults(suiteName: suite))
      let log = PostLog(watching: [faithful, plain])
      await log.recording { plain.set("plain", forKey: "k") }
      #if canImport(Darwin)
        #expect(log.posts.map(\.object) == [ObjectIdentifier(plain)])
      #else
        #expect(log.posts.isEmpty, "swift-corelibs-foundation started posting from set(_:forKey:)")
      #endif
    }
  }

  // MARK: - Observers may write back

  @Test(arguments: [WriteCall.setString, .setPersistentDomain, .removePersistentDomain])
  func anObserverMayWriteBackFromThePost(_ call: WriteCall) async throws {
    try await withSuite { suite, defaults in
      let log = PostLog(watching: [defaults])
      let echoed = Locked(false)
      let echo = NotificationCenter.default.addObserver(
        forName: UserDefaults.didChangeNotification, object: defaults, queue: nil
      ) { notification in
        let isFirstPost = echoed.withLock { done in
          defer { done = true }
          return !done
        }
        guard isFirstPost else { return }
        (notification.object as? AppleFaithfulDefaults)?.set("echo", forKey: "echo")
      }
      defer { NotificationCenter.default.removeObserver(echo) }
      await log.recording {
        await onNewThread(marked: "writer", defaults) { defaults in
          log.during { call.perform(on: defaults, suite: suite) }
        }
      }
      let post = PostLog.Post(object: ObjectIdentifier(defaults), thread: "writer", duringCall: true)
      #expect(log.posts == [post, post], "the call and the observer's write post once each")
      #expect(defaults.string(forKey: "echo") == "echo")
    }
  }

  // MARK: - Many threads

  @Test func concurrentWritersEachSeeTheirOwnPostOnTheirOwnThread() async throws {
    try await withSuite { _, defaults in
      let log = PostLog(watching: [defaults])
      let threads = 8
      let writesPerThread = 40
      await log.recording {
        writeConcurrently(to: defaults, log: log, threads: threads, writesPerThread: writesPerThread)
      }
      let expected = (0..<threads).flatMap { thread in (0..<writesPerThread).map { "t\(thread).\($0)" } }
      #expect(log.posts.count == threads * writesPerThread)
      #expect(log.posts.compactMap(\.thread).sorted() == expected.sorted())
      #expect(log.posts.allSatisfy { $0.object == ObjectIdentifier(defaults) })
    }
  }
}

// MARK: - Write calls under test

/// One call of each write entry point, including the typed overloads and `nil` values.
enum WriteCall: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case setString, setInt, setFloat, setDouble, setBool, setURL, setArray
  case setNil, setNilURL, setNilOptionalAsAny, removeObject
  case setPersistentDomain, removePersistentDomain

  var testDescription: String { rawValue }

  /// The file URL written by ``setURL``.
  static let url = URL(fileURLWithPath: "/tmp/zephyr-apple-faithful")

  func perform(on defaults: AppleFaithfulDefaults, suite: String) {
    switch self {
    case .setString: defaults.set("value", forKey: "k")
    case .setInt: defaults.set(42, forKey: "k")
    case .setFloat: defaults.set(Float(1.5), forKey: "k")
    case .setDouble: defaults.set(2.5, forKey: "k")
    case .setBool: defaults.set(true, forKey: "k")
    case .setURL: defaults.set(Self.url, forKey: "k")
    case .setArray: defaults.set(["a", "b"], forKey: "k")
    case .setNil: defaults.set(nil, forKey: "k")
    case .setNilURL: defaults.set(nil as URL?, forKey: "k")
    case .setNilOptionalAsAny: defaults.set(String?.none as Any, forKey: "k")
    case .removeObject: defaults.removeObject(forKey: "k")
    case .setPersistentDomain: defaults.setPersistentDomain(["k": "replaced", "other": 1], forName: suite)
    case .removePersistentDomain: defaults.removePersistentDomain(forName: suite)
    }
  }

  func expectedWrite(suite: String) -> AppleFaithfulDefaults.Write {
    switch self {
    case .setString, .setInt, .setFloat, .setDouble, .setBool, .setURL, .setArray: .set(key: "k")
    case .setNil, .setNilURL, .setNilOptionalAsAny, .removeObject: .remove(key: "k")
    case .setPersistentDomain: .setPersistentDomain(name: suite)
    case .removePersistentDomain: .removePersistentDomain(name: suite)
    }
  }

  /// Whether the suite shows the write's effect (the key held `"seed"` before).
  func tookEffect(on defaults: AppleFaithfulDefaults) -> Bool {
    switch self {
    case .setString: defaults.string(forKey: "k") == "value"
    case .setInt: defaults.integer(forKey: "k") == 42
    case .setFloat: defaults.float(forKey: "k") == 1.5
    case .setDouble: defaults.double(forKey: "k") == 2.5
    case .setBool: defaults.bool(forKey: "k")
    case .setURL: defaults.url(forKey: "k")?.path == Self.url.path
    case .setArray: defaults.stringArray(forKey: "k") == ["a", "b"]
    case .setNil, .setNilURL, .setNilOptionalAsAny, .removeObject, .removePersistentDomain:
      defaults.object(forKey: "k") == nil
    case .setPersistentDomain: defaults.string(forKey: "k") == "replaced" && defaults.integer(forKey: "other") == 1
    }
  }
}

// MARK: - Helpers

/// The `didChangeNotification`s posted for some instances, each with the marker of the
/// thread it ran on and whether it ran inside a call wrapped in ``during(_:)``.
private final class PostLog: Sendable {
  struct Post: Sendable, Equatable {
    var object: ObjectIdentifier
    /// The posting thread's ``PostLog/threadMarkerKey`` entry.
    var thread: String?
    var duringCall: Bool
  }

  /// The `threadDictionary` key a writer thread stores its marker under.
  static let threadMarkerKey = "AppleFaithfulDefaultsTests.thread"

  private let watched: Set<ObjectIdentifier>
  private let recorded = Locked<[Post]>([])
  /// How many ``during(_:)`` calls are running, per thread marker.
  private let calls = Locked<[String: Int]>([:])

  init(watching instances: [UserDefaults]) {
    watched = Set(instances.map(ObjectIdentifier.init))
  }

  var posts: [Post] { recorded.withLock { $0 } }

  /// Runs `body` with this log observing `didChangeNotification` from every sender.
  func recording(_ body: () async throws -> Void) async rethrows {
    let token = NotificationCenter.default.addObserver(
      forName: UserDefaults.didChangeNotification, object: nil, queue: nil
    ) { [self] notification in record(notification) }
    defer { NotificationCenter.default.removeObserver(token) }
    try await body()
  }

  /// Runs `body`, a write call, marking the current thread as inside it.
  func during(_ body: () -> Void) {
    let marker = Self.currentMarker ?? ""
    calls.withLock { $0[marker, default: 0] += 1 }
    defer { calls.withLock { $0[marker, default: 0] -= 1 } }
    body()
  }

  private func record(_ notification: Notification) {
    guard let object = notification.object as? UserDefaults, watched.contains(ObjectIdentifier(object)) else { return }
    let marker = Self.currentMarker
    let inside = calls.withLock { $0[marker ?? "", default: 0] > 0 }
    recorded.withLock { $0.append(Post(object: ObjectIdentifier(object), thread: marker, duringCall: inside)) }
  }

  private static var currentMarker: String? {
    Thread.current.threadDictionary[threadMarkerKey] as? String
  }
}

/// Runs `body` with `defaults` on a new thread whose marker is `marker`, and returns when
/// it has finished.
private func onNewThread(
  marked marker: String, _ defaults: AppleFaithfulDefaults,
  _ body: @escaping @Sendable (AppleFaithfulDefaults) -> Void
) async {
  // UserDefaults is thread-safe (Apple: "The UserDefaults class is thread-safe");
  // swift-corelibs-foundation does not declare it Sendable.
  nonisolated(unsafe) let defaults = defaults
  await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
    let thread = Thread {
      Thread.current.threadDictionary[PostLog.threadMarkerKey] = marker
      body(defaults)
      continuation.resume()
    }
    thread.start()
  }
}

/// `threads` threads each make `writesPerThread` write calls to `defaults`, marking each
/// call's thread with a marker of its own, while the interceptor is set and cleared.
private func writeConcurrently(to defaults: AppleFaithfulDefaults, log: PostLog, threads: Int, writesPerThread: Int) {
  // UserDefaults is thread-safe (Apple: "The UserDefaults class is thread-safe");
  // swift-corelibs-foundation does not declare it Sendable.
  nonisolated(unsafe) let shared = defaults
  DispatchQueue.concurrentPerform(iterations: threads) { thread in
    for step in 0..<writesPerThread {
      write(step: step, ofThread: thread, to: shared, log: log)
    }
    Thread.current.threadDictionary[PostLog.threadMarkerKey] = nil
  }
}

/// One step of `writeConcurrently`: a set or a remove, sometimes preceded by a change of
/// the interceptor (which lets everything through).
private func write(step: Int, ofThread thread: Int, to defaults: AppleFaithfulDefaults, log: PostLog) {
  let marker = "t\(thread).\(step)"
  Thread.current.threadDictionary[PostLog.threadMarkerKey] = marker
  if step.isMultiple(of: 8) {
    defaults.writeInterceptor = { _ in true }
  } else if step.isMultiple(of: 4) {
    defaults.writeInterceptor = nil
  }
  log.during {
    switch step % 3 {
    case 0: defaults.set(step, forKey: "n\(thread)")
    case 1: defaults.set(marker, forKey: "s\(thread)")
    default: defaults.removeObject(forKey: "n\(thread)")
    }
  }
}

/// Runs `body` with a fresh suite and an `AppleFaithfulDefaults` over it, then removes the
/// suite's persistent domain.
private func withSuite<Result>(
  _ body: (String, AppleFaithfulDefaults) async throws -> Result
) async throws -> Result {
  let (suite, defaults) = try makeSuite()
  defer { removeSuite(suite) }
  return try await body(suite, defaults)
}

private func makeSuite() throws -> (String, AppleFaithfulDefaults) {
  let suite = "zephyr-tests.apple-faithful.\(UUID().uuidString)"
  return (suite, try #require(AppleFaithfulDefaults(suiteName: suite)))
}

private func removeSuite(_ suite: String) {
  UserDefaults(suiteName: suite)?.removePersistentDomain(forName: suite)
}

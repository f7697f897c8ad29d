import Foundation
import Testing
import Zephyr

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Makes a hung test explain itself: a thread that, once the tests stop making progress,
/// prints the tests still running, whether the executors they wait on still run work,
/// every thread's stack (with `gdb`, where it exists), and aborts the process, so that a
/// run never hangs silently.
///
/// A test is known to run from its first ``Harness`` (or an explicit ``watch(_:)``) until
/// that harness is released. The watchdog fires when no test has started or ended for
/// `ZEPHYR_TEST_WATCHDOG_SECONDS` (600 by default; `0` turns it off) while some run: a
/// stall. A single test running that long is not enough, since Swift Testing queues an
/// async test that resumes behind every test case still waiting to run, which on one busy
/// core can take minutes; it fires for one test only past three times that deadline.
enum Watchdog {
  /// A running test, registered until released.
  final class Registration: Sendable {
    let id: Int

    fileprivate init(id: Int) { self.id = id }

    deinit {
      Watchdog.running.withLock { _ = $0.removeValue(forKey: id) }
      Watchdog.lastProgress.withLock { $0 = Date() }
    }
  }

  private struct Entry {
    var name: String
    var started: Date
  }

  private static let running = Locked<[Int: Entry]>([:])
  private static let nextID = Locked(0)
  /// When a test last started or ended.
  private static let lastProgress = Locked(Date())

  static let deadline: TimeInterval = {
    let configured = ProcessInfo.processInfo.environment["ZEPHYR_TEST_WATCHDOG_SECONDS"].flatMap(Double.init)
    return configured ?? 600
  }()

  /// Registers the test running on this task (named by Swift Testing) as running now.
  static func watch(_ what: String? = nil) -> Registration {
    _ = thread
    let name = what ?? currentTestName()
    let id = nextID.withLock { id -> Int in
      id += 1
      return id
    }
    running.withLock { $0[id] = Entry(name: name, started: Date()) }
    lastProgress.withLock { $0 = Date() }
    return Registration(id: id)
  }

  /// The current test, as Swift Testing names it, and where it is declared.
  static func currentTestName() -> String {
    guard let test = Test.current else { return "(outside a test)" }
    let location = test.sourceLocation
    return "\(test.name) (\(location.fileID):\(location.line))"
  }

  /// Started once, on the first registration.
  private static let thread: Void = {
    guard deadline > 0 else { return }
    let watcher = Thread {
      while true {
        Thread.sleep(forTimeInterval: min(10, deadline / 4))
        let now = Date()
        let entries = running.withLock { Array($0.values) }
        let stalled = !entries.isEmpty && now.timeIntervalSince(lastProgress.withLock { $0 }) > deadline
        guard stalled || entries.contains(where: { now.timeIntervalSince($0.started) > 3 * deadline }) else {
          continue
        }
        report(entries, now: now, stalled: stalled)
      }
    }
    watcher.name = "Zephyr test watchdog"
    watcher.start()
  }()

  private static func report(_ entries: [Entry], now: Date, stalled: Bool) -> Never {
    let why =
      stalled
      ? "no test has started or ended for \(Int(deadline)) s" : "a test has run for more than \(Int(3 * deadline)) s"
    var lines = ["", "WATCHDOG: \(why); tests running now:"]
    for entry in entries.sorted(by: { $0.started < $1.started }) {
      lines.append("  \(entry.name)  (for \(Int(now.timeIntervalSince(entry.started))) s)")
    }
    FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    probeExecutors()
    FileHandle.standardError.write(Data("every thread's stack follows (gdb), then the process aborts\n".utf8))
    dumpThreads()
    abort()
  }

  /// Which of the executors tests wait on still run work: the main queue, the global
  /// concurrent queue, a new thread, and Swift concurrency's global executor (a task).
  /// Each gets 20 seconds; the answer tells a stalled queue from a starved pool.
  private static func probeExecutors() {
    func probe(_ name: String, _ submit: (@escaping @Sendable () -> Void) -> Void) {
      let answered = DispatchSemaphore(value: 0)
      let start = Date()
      submit { answered.signal() }
      let ran = answered.wait(timeout: .now() + 20) == .success
      let verdict = ran ? "ran after \(String(format: "%.2f", Date().timeIntervalSince(start))) s" : "STALLED (20 s)"
      FileHandle.standardError.write(Data("WATCHDOG probe: \(name): \(verdict)\n".utf8))
    }
    probe("a new thread") { work in Thread { work() }.start() }
    probe("DispatchQueue.main") { work in DispatchQueue.main.async { work() } }
    probe("DispatchQueue.global()") { work in DispatchQueue.global().async { work() } }
    probe("a Task (Swift concurrency's global executor)") { work in Task.detached { work() } }
    probe("a @MainActor task") { work in Task { @MainActor in work() } }
  }

  /// `gdb -p <pid> -batch -ex 'thread apply all bt'`, when gdb is on the PATH.
  private static func dumpThreads() {
    let candidates = ["/usr/bin/gdb", "/usr/local/bin/gdb", "/bin/gdb"]
    guard let gdb = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
      FileHandle.standardError.write(Data("WATCHDOG: no gdb found: no stack dump\n".utf8))
      return
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: gdb)
    process.arguments = ["-p", "\(getpid())", "-batch", "-nx", "-ex", "thread apply all bt"]
    process.standardOutput = FileHandle.standardError
    process.standardError = FileHandle.standardError
    do {
      try process.run()
      process.waitUntilExit()
    } catch {
      FileHandle.standardError.write(Data("WATCHDOG: gdb did not run: \(error)\n".utf8))
    }
  }
}

import Foundation
import Testing
import Zephyr

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Makes a hung test explain itself: a thread that, once some test has run longer than a
/// generous deadline, prints the tests still running, dumps every thread's stack (with
/// `gdb`, where it exists) and aborts the process, so that a CI run never hangs silently.
///
/// A test is known to run from its first ``Harness`` (or an explicit ``watch(_:)``) until
/// that harness is released. The deadline is `ZEPHYR_TEST_WATCHDOG_SECONDS` (600 by
/// default: the slowest test takes well under a minute, even on one busy core); `0`
/// turns the watchdog off.
enum Watchdog {
  /// A running test, registered until released.
  final class Registration: Sendable {
    let id: Int

    fileprivate init(id: Int) { self.id = id }

    deinit { Watchdog.running.withLock { _ = $0.removeValue(forKey: id) } }
  }

  private struct Entry {
    var name: String
    var started: Date
  }

  private static let running = Locked<[Int: Entry]>([:])
  private static let nextID = Locked(0)

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
        guard entries.contains(where: { now.timeIntervalSince($0.started) > deadline }) else { continue }
        report(entries, now: now)
      }
    }
    watcher.name = "Zephyr test watchdog"
    watcher.start()
  }()

  private static func report(_ entries: [Entry], now: Date) -> Never {
    var lines = ["", "WATCHDOG: a test has run for more than \(Int(deadline)) s; tests running now:"]
    for entry in entries.sorted(by: { $0.started < $1.started }) {
      lines.append("  \(entry.name)  (for \(Int(now.timeIntervalSince(entry.started))) s)")
    }
    lines.append("every thread's stack follows (gdb), then the process aborts")
    FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    dumpThreads()
    abort()
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

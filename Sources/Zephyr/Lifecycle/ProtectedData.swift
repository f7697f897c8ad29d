import Foundation

/// A `UserDefaults` that says whether its data can be read now.
///
/// Before the first unlock after a restart (an app launched in the background, or
/// prewarmed), iOS keeps the app's files encrypted: `UserDefaults` reads as empty and
/// files in the app's container cannot be read. A coordinator whose suite conforms asks
/// it before every operation, instead of probing the file system; ZephyrTesting's
/// `AppleFaithfulDefaults` conforms, so that tests can put a coordinator in that state
/// (see <doc:TestingWithSimulatedCloud#Before-the-first-unlock>).
///
/// A conforming suite also posts `UIApplicationProtectedDataDidBecomeAvailable` (by that
/// raw name, on `NotificationCenter.default`, with itself as the object) when its data
/// becomes readable, as iOS does, so that work waiting for it runs without another call.
/// A coordinator ignores the posts of other conforming suites.
public protocol ProtectedDataReporting: AnyObject {
  /// Whether the suite's data can be read and written now. Called from any thread, with
  /// no lock held, before each of the coordinator's operations: keep it cheap.
  var isProtectedDataAvailable: Bool { get }
}

/// The notifications iOS posts when protected data changes availability, by their raw
/// names (UIKit's constants are main-actor isolated, and Zephyr imports no UIKit).
package enum ProtectedDataNotification {
  /// `UIApplication.protectedDataDidBecomeAvailableNotification`.
  package static let didBecomeAvailable = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")
  /// `UIApplication.protectedDataWillBecomeUnavailableNotification`.
  package static let willBecomeUnavailable = Notification.Name("UIApplicationProtectedDataWillBecomeUnavailable")
}

/// The cheap check made before each operation where the suite does not report
/// availability itself (see ``ProtectedDataReporting``).
///
/// On iOS, tvOS, visionOS and watchOS: a small file beside the ledger, protected like the
/// app's `UserDefaults` file (complete until first user authentication), is opened for
/// reading. Only a permission error says "unavailable"; a missing file is created and
/// says "available". So the check never depends on what the suite holds: an empty suite
/// after a real reset is not mistaken for a locked device, nor the reverse. Elsewhere
/// (macOS, Linux) app data is not protected this way: always available.
struct ProtectedDataProbe: Sendable {
  /// The probe file.
  let url: URL

  init(ledgerFile: LedgerFile) {
    url = ledgerFile.url.deletingLastPathComponent().appendingPathComponent("protected-data-probe")
  }

  /// Whether protected data is available now.
  func isAvailable() -> Bool {
    #if os(iOS) || os(tvOS) || os(visionOS) || os(watchOS)
      do {
        let handle = try FileHandle(forReadingFrom: url)
        try? handle.close()
        return true
      } catch {
        if Self.isPermissionError(error) { return false }
      }
      do {
        try FileManager.default.createDirectory(
          at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data().write(to: url, options: [.atomic, .completeFileProtectionUntilFirstUserAuthentication])
        return true
      } catch {
        return !Self.isPermissionError(error)
      }
    #else
      return true
    #endif
  }

  /// Whether `error` is the one a protected file gives while its class key is unavailable:
  /// `EPERM` ("Operation not permitted"), directly or under Foundation's file error.
  /// (`EACCES`, a file's own permissions, would never change by itself: not taken for it.)
  static func isPermissionError(_ error: any Error) -> Bool {
    let error = error as NSError
    if error.domain == NSPOSIXErrorDomain, error.code == Int(EPERM) { return true }
    if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError { return isPermissionError(underlying) }
    return false
  }
}

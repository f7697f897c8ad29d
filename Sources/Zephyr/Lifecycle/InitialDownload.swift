import Foundation

/// Whether the store's initial download has happened on this device: the first download
/// of the cloud's values after a new install or an account change.
///
/// Before it, the key-value store keeps no write (Apple: "Your attempt to write to
/// key-value storage was discarded because an initial download from iCloud has not yet
/// happened"), and values the person set on other devices are not here yet. An app that
/// writes first-launch values (an onboarding flag, a default theme) waits for it, so that
/// it does not take "not downloaded yet" for "never set":
///
/// ```swift
/// switch await Zephyr.waitForInitialDownload(timeout: .seconds(10)) {
/// case .done, .unknown:
///   // The cloud's values are in UserDefaults (or this install is not new).
///   if !UserDefaults.standard.bool(forKey: "onboarded") { showOnboarding() }
/// case .pending:
///   // Offline, or iCloud is slow: decide without the cloud, and let Zephyr merge later.
///   showOnboarding()
/// }
/// ```
///
/// See ``SyncCoordinator/waitForInitialDownload(timeout:)`` and
/// ``SyncStatus/initialDownload``.
public enum InitialDownload: String, Sendable, Hashable, CustomStringConvertible {
  /// It happened, and the values it brought for the monitored keys are in `UserDefaults`:
  /// the store reported it (`initialSync`, or an account change, which downloads the new
  /// account's values), or reported a server change (which only follows it), in this
  /// launch or an earlier one.
  case done
  /// A new install whose initial download has not been reported yet: no ledger existed
  /// at launch and no store event has arrived since.
  case pending
  /// Zephyr cannot tell: an install that synced before this version recorded the
  /// download, or, while protected data is unavailable, one whose records cannot be read
  /// yet. Such an install is not new, so an app treats it like ``done``.
  case unknown

  /// `done`, `pending` or `unknown`.
  public var description: String { rawValue }
}

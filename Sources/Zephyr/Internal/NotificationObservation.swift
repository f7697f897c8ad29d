import Foundation

extension ObservationToken {
  /// Observes `name` from `object` (every sender when `nil`) on `center`, calling
  /// `handler` synchronously on the posting thread, until the token is cancelled or
  /// released. No lock is held around `addObserver` or `removeObserver`.
  static func observing(
    _ name: Notification.Name, from object: AnyObject?, on center: NotificationCenter,
    _ handler: @escaping @Sendable (Notification) -> Void
  ) -> ObservationToken {
    LockAudit.assertNoLockHeld(calling: "NotificationCenter")
    let token = center.addObserver(forName: name, object: object, queue: nil, using: handler)
    let registration = Registration(center: center, token: token)
    return ObservationToken { registration.center.removeObserver(registration.token) }
  }
}

/// An observer registration: the opaque token `addObserver` returned and the center to
/// hand it back to. The token is never used but as an argument to `removeObserver`, which
/// is thread-safe, hence `nonisolated(unsafe)`.
private final class Registration: Sendable {
  let center: NotificationCenter
  nonisolated(unsafe) let token: any NSObjectProtocol

  init(center: NotificationCenter, token: any NSObjectProtocol) {
    self.center = center
    self.token = token
  }
}

import Foundation

/// Keeps an observation alive; cancelling or releasing it stops the observation.
public final class ObservationToken: Sendable {
  private let cancellation: Locked<(@Sendable () -> Void)?>

  /// Creates a token that runs `cancel` once, on ``cancel()`` or when released.
  public init(cancel: @escaping @Sendable () -> Void) {
    cancellation = Locked(cancel)
  }

  /// Stops the observation. Later calls do nothing.
  public func cancel() {
    let action = cancellation.withLock { action -> (@Sendable () -> Void)? in
      defer { action = nil }
      return action
    }
    action?()
  }

  deinit {
    cancel()
  }
}

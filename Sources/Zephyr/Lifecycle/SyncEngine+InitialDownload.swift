import Foundation

/// The callers of ``SyncCoordinator/waitForInitialDownload(timeout:)`` waiting now.
struct DownloadWaiters: Sendable {
  private var waiters: [Int: CheckedContinuation<InitialDownload, Never>] = [:]
  /// Each waiter's timeout, cancelled when the waiter is resumed otherwise.
  private var timers: [Int: Task<Void, Never>] = [:]
  private var nextID = 0

  /// Adds a waiter; returns its id.
  mutating func add(_ continuation: CheckedContinuation<InitialDownload, Never>) -> Int {
    nextID += 1
    waiters[nextID] = continuation
    return nextID
  }

  /// Records the timeout of the waiter `id`; `false` when the waiter was resumed already.
  mutating func setTimer(_ timer: Task<Void, Never>, for id: Int) -> Bool {
    guard waiters[id] != nil else { return false }
    timers[id] = timer
    return true
  }

  /// Removes the waiter `id` and returns it with its timeout, unless it was resumed already.
  mutating func remove(_ id: Int) -> (CheckedContinuation<InitialDownload, Never>, Task<Void, Never>?)? {
    guard let waiter = waiters.removeValue(forKey: id) else { return nil }
    return (waiter, timers.removeValue(forKey: id))
  }

  /// Removes every waiter and returns them with their timeouts, to be resumed and
  /// cancelled outside the lock.
  mutating func removeAll() -> [(CheckedContinuation<InitialDownload, Never>, Task<Void, Never>?)] {
    defer {
      waiters = [:]
      timers = [:]
    }
    // Resumed in the order they came.
    return waiters.keys.sorted().compactMap { id in waiters[id].map { ($0, timers[id]) } }
  }

  var isEmpty: Bool { waiters.isEmpty }
}

extension SyncEngine {
  /// See ``SyncCoordinator/waitForInitialDownload(timeout:)``.
  func waitForInitialDownload(timeout: Duration) async -> InitialDownload {
    if let known = settledDownload() { return known }
    let sleep = state.withLock { $0.configuration.sleep }
    let box = Locked<Int?>(nil)
    return await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<InitialDownload, Never>) in
        let id = downloadWaiters.withLock { $0.add(continuation) }
        box.withLock { $0 = id }
        // The download may have completed between the first look and the registration.
        if settledDownload() != nil || Task.isCancelled { finishWaiter(id) }
        let timer = Task { [weak self] in
          try? await sleep(timeout)
          self?.finishWaiter(id)
        }
        if !downloadWaiters.withLock({ $0.setTimer(timer, for: id) }) { timer.cancel() }
      }
    } onCancel: {
      if let id = box.withLock({ $0 }) { finishWaiter(id) }
    }
  }

  /// Where the initial download stands when waiting for it would end at once: known, and
  /// not pending. `nil` while it is pending, or not read yet (protected data unavailable).
  private func settledDownload() -> InitialDownload? {
    state.withLock { state in
      guard state.protectedData.isLoaded, state.status.initialDownload != .pending else { return nil }
      return state.status.initialDownload
    }
  }

  /// Resumes the waiter `id` with where the download stands, unless it was resumed already.
  private func finishWaiter(_ id: Int) {
    guard let (waiter, timer) = downloadWaiters.withLock({ $0.remove(id) }) else { return }
    timer?.cancel()
    waiter.resume(returning: state.withLock { $0.status.initialDownload })
  }

  /// The store reported an event that follows its initial download (`reason`): the
  /// download is done. Recorded beside the ledger, so that later launches know it, and
  /// every waiter is resumed. Called by the operation that applied the event.
  func initialDownloadHappened(_ reason: ExternalChange.Reason) {
    guard reason != .quotaViolation else { return }
    let first = state.withLock { state -> Bool in
      guard state.status.initialDownload != .done else { return false }
      state.status.initialDownload = .done
      state.debug("initial download done (\(reason) event)")
      return true
    }
    guard first else { return }
    if mayWrite(.ledger) {
      do {
        try FileManager.default.createDirectory(
          at: ledgerFile.initialDownloadMarker.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data().write(to: ledgerFile.initialDownloadMarker, options: .atomic)
      } catch {
        state.withLock { $0.debug("initial download not recorded at \(self.ledgerFile.initialDownloadMarker.path)") }
      }
    }
    resumeDownloadWaiters()
  }

  /// Resumes every waiter once the download is settled.
  func resumeDownloadWaiters() {
    guard let settled = settledDownload() else { return }
    for (waiter, timer) in downloadWaiters.withLock({ $0.removeAll() }) {
      timer?.cancel()
      waiter.resume(returning: settled)
    }
  }
}

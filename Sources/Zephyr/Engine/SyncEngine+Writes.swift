import Foundation

/// The writes an operation makes, at the end of the pipeline: the store's, `UserDefaults`'
/// (Zephyr's own, counted with their echoes) and the ledger's. Each may be stopped by a
/// simulated crash (``TestHooks``).
extension SyncEngine {
  /// Whether a write at `point` may go ahead; `false` once a simulated crash struck.
  /// (`nil`: a call that writes nothing durable, such as `synchronize()`.)
  func mayWrite(_ point: WritePoint?) -> Bool {
    let (crashed, crashBefore) = testHooks.withLock { ($0.crashed, $0.crashBefore) }
    if crashed { return false }
    // The hook is test code: asked with no lock held.
    guard let point, let crashBefore, crashBefore(point) else { return true }
    testHooks.withLock { $0.crashed = true }
    return false
  }

  /// Writes `value` to `UserDefaults`, or removes the key when `nil`, as a call-out (see
  /// ``ownWrite(_:)``). `false` when a simulated crash stopped the write.
  @discardableResult
  func writeLocally(_ key: String, _ value: PropertyListValue?) -> Bool {
    guard mayWrite(.defaults(key)) else { return false }
    ownWrite { domain in
      if let value { domain.set(value, forKey: key) } else { domain.remove(forKey: key) }
    }
    return true
  }

  /// Makes one `UserDefaults` write of the operation as Zephyr's own, counted with the
  /// operation's, as a call-out (``callingOut(as:_:)``): the write's observers may make
  /// this thread wait for theirs.
  private func ownWrite(_ write: (UserDefaultsDomain) -> Void) {
    let counted = callingOut { writeAsOwn(write) }
    state.withLock { $0.lane.ownWrites += counted }
  }

  /// Makes `write` as this coordinator's own: the `didChangeNotification`s it posts on
  /// this thread are counted (see ``OwnWriteMarker``), not taken for an edit to push.
  /// The one way Zephyr writes `UserDefaults`, for an operation (``writeLocally(_:_:)``)
  /// and a typed set alike.
  func writeAsOwn(_ write: (UserDefaultsDomain) -> Void) -> OwnWrites {
    OwnWrites(writes: 1, announcements: OwnWriteMarker.write(by: id) { write(domain) })
  }

  /// Writes one of Zephyr's bookkeeping strings, like ``writeLocally(_:_:)``.
  func writeBookkeeping(_ text: String, forKey key: String) {
    guard mayWrite(.defaults(key)) else { return }
    ownWrite { $0.setBookkeepingString(text, forKey: key) }
  }

  /// Saves the ledger's unsaved changes: appended to the file, or the whole file
  /// rewritten when appending failed or has gone on long enough. A failure is logged
  /// once, shown in ``SyncStatus/notes`` until a save succeeds, and tried again with the
  /// next operation.
  func saveLedger() {
    let wasFailing = state.withLock { $0.journal.failure != nil }
    for attempt in 0..<2 {
      guard let save = state.withLock({ $0.journal.pendingSave(of: $0.ledger) }), mayWrite(.ledger) else { return }
      do {
        let bytes = try ledgerFile.write(save)
        state.withLock { $0.journal.saved(save, bytes: bytes, ledger: $0.ledger) }
        return
      } catch {
        let reason = "\(ledgerFile.url.path): \(error.localizedDescription)"
        state.withLock { state in
          state.journal.failed(reason)
          state.ledgerMayBeStale = true
          if attempt == 1, !wasFailing {
            state.warn("could not save the ledger at \(reason); history is kept in memory and saved again later")
          }
        }
      }
    }
  }
}

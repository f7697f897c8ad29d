import Foundation

extension EngineState {
  /// Reads the device id and the ledger, creating either when missing. Runs before the
  /// coordinator's lock exists, so its `UserDefaults` calls hold no lock.
  static func load(domain: UserDefaultsDomain, ledgerFile: LedgerFile, configuration: SyncConfiguration)
    -> EngineState
  {
    var notes: [String] = []
    let isNewInstall = !ledgerFile.exists
    let downloaded = FileManager.default.fileExists(atPath: ledgerFile.initialDownloadMarker.path)
    let deviceID = loadDeviceID(ledgerFile: ledgerFile, configuration: configuration, notes: &notes)
    var ledger: Ledger
    var records = 0
    var fileBytes = 0
    var mayBeStale = false
    if let epoch = domain.bookkeepingString(forKey: ledgerIDKey), !epoch.isEmpty {
      ledger = Ledger(epoch: epoch)
      do {
        if let stored = try ledgerFile.load() {
          if stored.ledger.epoch == epoch {
            ledger = stored.ledger
            records = stored.records
            fileBytes = stored.bytes
            if stored.damagedTail {
              mayBeStale = true
              notes.append("ledger had a damaged tail: its last saves were ignored, older history kept")
            }
          } else {
            notes.append("ledger belongs to another copy of this domain: discarded, no history")
          }
        } else {
          // The domain has synced before (it carries an epoch), but its ledger is gone.
          mayBeStale = true
          notes.append(
            "ledger file missing at \(ledgerFile.url.path): history rebuilt from the store and this device's own records"
          )
        }
      } catch {
        mayBeStale = true
        notes.append("ledger unreadable (\(error)): discarded, history rebuilt from the store")
      }
    } else {
      // A new or reset domain: whatever a ledger file says describes values it no longer has.
      ledger = Ledger(epoch: randomID(length: 12))
      domain.setBookkeepingString(ledger.epoch, forKey: ledgerIDKey)
    }
    if mayBeStale {
      // A ledger that may lack this device's last writes starts a new incarnation: its
      // strategy keys' next writes must not be taken for writes it no longer knows of.
      ledger.incarnation = randomID(length: 4)
      records = 0
    }
    var state = EngineState(
      configuration: configuration, deviceID: deviceID, ledger: ledger)
    state.journal = LedgerJournal(records: records, fileBytes: fileBytes)
    state.ledgerMayBeStale = mayBeStale
    state.metrics = MetricsFile(ledger: ledgerFile).load()
    state.status.initialDownload = downloaded ? .done : isNewInstall ? .pending : .unknown
    for note in notes { state.note(note) }
    return state
  }

  /// The configured device id when it is usable; else this process's own id, kept in a
  /// file beside its ledgers (so an app and its extensions, which share an app-group
  /// suite but not a container, never share an id); else a new one.
  private static func loadDeviceID(
    ledgerFile: LedgerFile, configuration: SyncConfiguration, notes: inout [String]
  ) -> String {
    if let configured = configuration.deviceID, isUsable(configured) { return configured }
    let identityFile = ledgerFile.url.deletingLastPathComponent().appendingPathComponent("device-id")
    let deviceID: String
    if let data = try? Data(contentsOf: identityFile), let stored = String(data: data, encoding: .utf8),
      isUsable(stored)
    {
      deviceID = stored
    } else {
      deviceID = randomID(length: 6)
      do {
        try FileManager.default.createDirectory(
          at: identityFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(deviceID.utf8).write(to: identityFile, options: .atomic)
      } catch {
        notes.append(
          "device id not saved at \(identityFile.path) (\(error.localizedDescription)): using \(deviceID) for now")
      }
    }
    if let configured = configuration.deviceID {
      notes.append(
        "deviceID \"\(configured.prefix(80))\" must be 1 to \(SyncRecord.maximumOriginLength) characters: using \(deviceID)"
      )
    }
    return deviceID
  }

  /// Whether records written under `id` decode on every device.
  private static func isUsable(_ id: String) -> Bool {
    !id.isEmpty && id.count <= SyncRecord.maximumOriginLength
  }
}

extension EngineState {
  /// The state of a coordinator created while protected data is unavailable: nothing is
  /// read yet (the suite reads as empty, the ledger cannot be read), so nothing is known.
  /// ``adoptLoaded(_:)`` fills it in once the data is available.
  static func waitingForProtectedData(configuration: SyncConfiguration) -> EngineState {
    var state = EngineState(
      configuration: configuration, deviceID: configuration.deviceID ?? "", ledger: Ledger(epoch: ""))
    state.protectedData.isLoaded = false
    state.protectedData.launchSynchronizeDeferred = true
    state.status.isProtectedDataAvailable = false
    return state
  }

  /// Takes what ``load(domain:ledgerFile:configuration:)`` read once protected data became
  /// available, keeping the settings, the waiting work and the status made meanwhile.
  mutating func adoptLoaded(_ loaded: EngineState) {
    deviceID = loaded.deviceID
    ledger = loaded.ledger
    journal = loaded.journal
    ledgerMayBeStale = loaded.ledgerMayBeStale
    // What was counted meanwhile (the launch, events) adds to what was saved.
    var counted = loaded.metrics
    counted.absorb(metrics)
    metrics = counted
    status.initialDownload = loaded.status.initialDownload
    for text in loaded.status.notes { note(text) }
    protectedData.isLoaded = true
  }
}

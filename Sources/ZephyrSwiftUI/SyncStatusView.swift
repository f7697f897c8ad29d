// Compiled where SwiftUI exists; elsewhere (Linux) this module is empty.
#if canImport(SwiftUI)
  import SwiftUI
  import Zephyr

  /// A screen that shows what sync is doing on this device: the store's budget, refused
  /// keys, the iCloud account, the initial download, the last events and the last seven
  /// days' ``Zephyr/SyncMetrics``. Drop it into a settings screen or a debug menu.
  ///
  /// ```swift
  /// NavigationLink("Sync") { SyncStatusView() }                        // the shared coordinator
  /// NavigationLink("Sync") { SyncStatusView(coordinator: coordinator) }
  /// ```
  ///
  /// It reads ``Zephyr/SyncCoordinator/status`` off the main actor when it appears and
  /// after every batch that changes the metrics (``Zephyr/SyncCoordinator/metricsUpdates``),
  /// so it stays current while it is shown and costs nothing once it is gone. It shows
  /// key names and sizes, never values.
  @MainActor
  public struct SyncStatusView: View {
    private let coordinator: SyncCoordinator
    @State private var status: SyncStatus?
    @State private var metrics: SyncMetrics?

    /// A status screen of `coordinator`.
    public init(coordinator: SyncCoordinator) {
      self.coordinator = coordinator
    }

    /// A status screen of the facade's shared coordinator, ``Zephyr/Zephyr/shared``.
    public init() {
      self.init(coordinator: Zephyr.shared)
    }

    /// The screen: a list of sections, filled in once the status is read.
    public var body: some View {
      List {
        if let status {
          Section("iCloud") { account(status) }
          Section("Store budget") { budget(status) }
          Section("Refused keys") { refusals(status) }
          Section("Last events") { events(status) }
        }
        if let metrics {
          Section("Last 7 days") { week(metrics) }
        }
      }
      .task(id: ObjectIdentifier(coordinator)) {
        let coordinator = coordinator
        for await latest in coordinator.metricsUpdates {
          // The status sizes the store's keys and asks the store about the account: read
          // off the main actor.
          let read = await Task.detached { coordinator.status }.value
          status = read
          metrics = latest
        }
      }
    }

    @ViewBuilder private func account(_ status: SyncStatus) -> some View {
      LabeledContent("Account", value: status.isSignedIn.map { $0 ? "Signed in" : "Signed out" } ?? "Unknown")
      LabeledContent(
        "synchronize()",
        value: status.lastSynchronizeSucceeded.map { $0 ? "Succeeded" : "Failed" } ?? "Not called")
      LabeledContent("Initial download", value: Self.describe(status.initialDownload))
      if !status.isProtectedDataAvailable {
        LabeledContent("Protected data", value: "Locked: \(status.waitingOperations) waiting")
      }
    }

    @ViewBuilder private func budget(_ status: SyncStatus) -> some View {
      let limits = status.limits
      ProgressView(
        value: Double(min(status.estimatedBytes, limits.maximumTotalBytes)), total: Double(limits.maximumTotalBytes)
      ) {
        LabeledContent("Bytes", value: "\(status.estimatedBytes) of \(limits.maximumTotalBytes)")
      }
      ProgressView(value: Double(min(status.keyCount, limits.maximumKeyCount)), total: Double(limits.maximumKeyCount)) {
        LabeledContent("Keys", value: "\(status.keyCount) of \(limits.maximumKeyCount)")
      }
      ForEach(status.largestKeys, id: \.key) { size in
        LabeledContent(size.key, value: "\(size.bytes) bytes")
      }
    }

    @ViewBuilder private func refusals(_ status: SyncStatus) -> some View {
      if status.refusedKeys.isEmpty {
        Text("None")
      } else {
        ForEach(status.refusedKeys.keys.sorted(), id: \.self) { key in
          VStack(alignment: .leading) {
            Text(key)
            Text(status.refusedKeys[key].map(String.init(describing:)) ?? "").font(.caption)
          }
        }
      }
    }

    @ViewBuilder private func events(_ status: SyncStatus) -> some View {
      if let event = status.lastEvent {
        let keys = event.keyCount.map { "\($0) keys" } ?? "all keys"
        LabeledContent("Last event", value: "\(event.reason), \(keys), \(Self.time(event.date))")
      } else {
        LabeledContent("Last event", value: "None")
      }
      LabeledContent("Last push", value: Self.time(status.lastPush))
      LabeledContent("Last pull", value: Self.time(status.lastPull))
      if let violation = status.lastQuotaViolation {
        LabeledContent("Quota violation", value: Self.time(violation))
      }
      if let change = status.lastAccountChange {
        LabeledContent("Account change", value: Self.time(change))
      }
    }

    @ViewBuilder private func week(_ metrics: SyncMetrics) -> some View {
      LabeledContent("Store writes", value: "\(metrics.storeWrites) (average \(metrics.averageWriteBytes) bytes)")
      LabeledContent("Launches", value: "\(metrics.launches), \(metrics.launchesSignedOut) signed out")
      ForEach(ExternalChange.Reason.allCases.filter { metrics.events[$0] != nil }, id: \.self) { reason in
        LabeledContent("\(reason) events", value: "\(metrics.events[reason] ?? 0)")
      }
      LabeledContent("Differing from store", value: "\(metrics.keysDifferingFromStore) keys")
      if let delay = metrics.deliveryDelay {
        LabeledContent(
          "Delivery delay",
          value: String(format: "%.1f / %.1f / %.1f s", delay.lower, delay.median, delay.upper))
      }
      ForEach(metrics.refusals.keys.sorted(), id: \.self) { kind in
        LabeledContent("Refused: \(kind)", value: "\(metrics.refusals[kind] ?? 0)")
      }
    }

    private static func describe(_ download: InitialDownload) -> String {
      switch download {
      case .done: "Done"
      case .pending: "Waiting"
      case .unknown: "Unknown"
      }
    }

    private static func time(_ date: Date?) -> String {
      date.map { $0.formatted(date: .abbreviated, time: .standard) } ?? "Never"
    }
  }
#endif

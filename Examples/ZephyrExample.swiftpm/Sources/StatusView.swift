import SwiftUI
import Zephyr

/// What Zephyr sees: the store's budget, its largest keys, the keys it refused and its last
/// events, from `coordinator.status`, refreshed when values arrive from iCloud.
struct StatusView: View {
  /// The coordinator the facade forwards to.
  let coordinator: SyncCoordinator = Zephyr.shared
  @State private var status: SyncStatus = Zephyr.status

  var body: some View {
    NavigationStack {
      List {
        Section("iCloud") {
          LabeledContent("synchronize()", value: describe(status.lastSynchronizeSucceeded))
          LabeledContent("Initial download", value: "\(status.initialDownload)")
          if status.lastSynchronizeSucceeded == false {
            Text(
              "No iCloud account, or the app lacks the iCloud key-value storage entitlement: values stay on this device."
            )
            .font(.footnote)
          }
        }
        Section("Store budget") {
          ProgressView(value: Double(status.estimatedBytes), total: Double(status.limits.maximumTotalBytes)) {
            Text("\(status.estimatedBytes) of \(status.limits.maximumTotalBytes) bytes")
          }
          LabeledContent("Keys", value: "\(status.keyCount) of \(status.limits.maximumKeyCount)")
          LabeledContent("Zephyr's overhead", value: "\(status.overheadBytes) bytes")
        }
        Section("Largest keys") {
          ForEach(status.largestKeys, id: \.key) { size in
            LabeledContent(size.key, value: "\(size.bytes) bytes\(size.isCompressed ? ", compressed" : "")")
          }
        }
        Section("Refused keys") {
          if status.refusedKeys.isEmpty { Text("None") }
          ForEach(status.refusedKeys.keys.sorted(), id: \.self) { key in
            LabeledContent(key, value: status.refusedKeys[key].map { "\($0)" } ?? "")
          }
        }
        Section("Last events") {
          LabeledContent("Inbound", value: describe(status.lastEvent))
          LabeledContent("Last push", value: describe(status.lastPush))
          LabeledContent("Last pull", value: describe(status.lastPull))
          LabeledContent("Quota violation", value: describe(status.lastQuotaViolation))
          LabeledContent("Account change", value: describe(status.lastAccountChange))
        }
        if !status.notes.isEmpty {
          Section("Notes") {
            ForEach(status.notes, id: \.self) { Text($0) }
          }
        }
      }
      .navigationTitle("Sync")
      .toolbar {
        Button("Sync now") {
          coordinator.sync()
          status = coordinator.status
        }
      }
      .refreshable { status = coordinator.status }
      .onAppear { status = coordinator.status }
      .onReceive(NotificationCenter.default.publisher(for: Zephyr.keysDidChangeOnCloudNotification)) { _ in
        status = coordinator.status  // posted on the main queue
      }
    }
  }

  private func describe(_ date: Date?) -> String {
    date?.formatted(date: .omitted, time: .standard) ?? "never"
  }

  private func describe(_ succeeded: Bool?) -> String {
    succeeded.map { $0 ? "succeeded" : "failed" } ?? "not called yet"
  }

  private func describe(_ event: SyncStatus.Event?) -> String {
    guard let event else { return "none" }
    let keys = event.keyCount.map { "\($0) keys" } ?? "keys not named"
    return "\(event.reason), \(keys), \(describe(event.date))"
  }
}

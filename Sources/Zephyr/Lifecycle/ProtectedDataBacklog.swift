import Foundation

/// What a coordinator holds while protected data is unavailable (before the first unlock
/// after a restart): the operations asked for, in order, and the typed sets made, none of
/// them run or written yet. Held in the coordinator's state; see
/// ``SyncCoordinator/admitsProtectedData(_:)``.
struct ProtectedDataBacklog: Sendable {
  /// Whether the device id and the ledger were read: `false` for a coordinator created
  /// while the data was unavailable, until it is.
  var isLoaded = true
  /// Whether the launch's `synchronize()` was put off with the rest.
  var launchSynchronizeDeferred = false
  /// Operations asked for meanwhile, in the order asked; a repeated `sync()`, local-edit
  /// push or identical event is kept once.
  private(set) var waiting: [Request] = []
  /// Typed sets made meanwhile, by key, with their order: the last value of each key
  /// (`nil`: removed) and what keeps the fields its type does not know, written to
  /// `UserDefaults` and pushed once the data is available.
  private(set) var heldSets: [String: HeldSet] = [:]
  private(set) var heldOrder: [String] = []

  /// How many operations and typed sets wait.
  var count: Int { waiting.count + heldSets.count }

  /// Whether anything waits, or the launch is still to be completed.
  var hasWork: Bool { !isLoaded || launchSynchronizeDeferred || count > 0 }

  /// Puts `request` off until the data is available.
  mutating func wait(_ request: Request) {
    guard !waiting.contains(request) else { return }
    waiting.append(request)
  }

  /// A typed set held: its value, and what keeps the fields the type does not know from
  /// the value the key holds once it can be read.
  struct HeldSet: Sendable {
    var key: String
    var value: PropertyListValue?
    var keeper: FieldKeeper?
  }

  /// Holds a typed set of `key` until the data is available.
  mutating func hold(_ value: PropertyListValue?, forKey key: String, keeping keeper: FieldKeeper?) {
    let held = HeldSet(key: key, value: value, keeper: keeper)
    if heldSets.updateValue(held, forKey: key) == nil { heldOrder.append(key) }
  }

  /// The held value of `key`, when a typed set of it waits: `.some(nil)` for a removal.
  func heldValue(forKey key: String) -> PropertyListValue?? {
    heldSets[key].map(\.value)
  }

  /// Takes everything that waits, to be run now.
  mutating func takeAll() -> (requests: [Request], sets: [HeldSet]) {
    defer {
      waiting = []
      heldSets = [:]
      heldOrder = []
    }
    return (waiting, heldOrder.compactMap { heldSets[$0] })
  }
}

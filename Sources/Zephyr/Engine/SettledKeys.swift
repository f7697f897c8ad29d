import Foundation

/// The keys the last batch that read them decided to leave alone, each with everything
/// the decision was made from.
///
/// ``Reconciler/decide(_:_:)`` is a pure function of a key's ``Reconciler/Input`` and the
/// batch's ``Reconciler/Context``: the same inputs give the same decision. A batch that
/// reads a key's very inputs again therefore takes "nothing to do" without deciding again.
/// That is what makes a steady ``SyncCoordinator/sync()`` cost little more than reading
/// both sides: decoding each record and fingerprinting each value is most of a decision.
///
/// Only a decision to do nothing, with no problem to report, is kept; and only when no
/// user code took part (a `.custom` strategy) and nothing outside the inputs could matter
/// (an account change or initial download being taken, a ledger that may be stale). Any
/// difference in an input (a local or store value, the ledger entry, the declaration,
/// the policy, the ids) decides the key again, so the shortcut never changes an outcome;
/// it only skips work whose result is known.
///
/// The device's clock is the one input left out, or every write of any key would unsettle
/// every other: it numbers a new write, and a decision to write nothing numbers none. (A
/// record is also judged against it, and a record plausible under a clock stays so under
/// a later one.) Debug builds decide every settled key again and assert that it still
/// comes out as nothing to do, so every test and randomized scenario checks this.
struct SettledKeys: Sendable {
  /// What one key's decision was made from. A key's strategy and capacity are known to
  /// be the same by ``EngineState/declarations``, which counts every change of either.
  private struct Inputs: Sendable, Equatable {
    var local: PropertyListValue?
    var storeValue: PropertyListValue?
    var ledger: LedgerEntry?
    var declarations: UInt64
    var policy: MismatchPolicy
    var deviceID: String
    var replicaID: String?
  }

  private var inputs: [String: Inputs] = [:]
  /// Whether no key is settled.
  var isEmpty: Bool { inputs.isEmpty }
  /// How many keys were decided (not taken as settled), for tests.
  private(set) var decisionsMade = 0

  /// Whether `key` was last decided, with nothing to do, from these very inputs.
  func holds(
    _ key: String, local: PropertyListValue?, storeValue: PropertyListValue?, ledger: LedgerEntry?,
    takingStore: Bool, declarations: UInt64, _ context: Reconciler.Context
  ) -> Bool {
    guard !takingStore, context.ownOrigin == nil, let settled = inputs[key] else { return false }
    return settled.declarations == declarations && settled.policy == context.policy
      && settled.deviceID == context.deviceID && settled.replicaID == context.replicaID
      && settled.local == local && settled.storeValue == storeValue && settled.ledger == ledger
  }

  /// Keeps what a batch decided from `inputs` (the keys it did not take as settled): the
  /// keys left alone, to be taken as settled while their inputs stay the same; every
  /// other key is forgotten.
  mutating func record(
    _ inputs: [Reconciler.Input], _ context: Reconciler.Context, declarations: UInt64,
    decisions: [String: Reconciler.Decision]
  ) {
    for input in inputs {
      decisionsMade += 1
      let quiet =
        decisions[input.key] == Reconciler.Decision(action: .none) && !input.takingStore
        && context.ownOrigin == nil && MergeStrategy.Settled(input.strategy) != nil
      self.inputs[input.key] =
        quiet
        ? Inputs(
          local: input.local, storeValue: input.storeValue, ledger: input.ledger, declarations: declarations,
          policy: context.policy, deviceID: context.deviceID, replicaID: context.replicaID) : nil
    }
  }
}

extension EngineState {
  /// `keys` split into those to decide and those settled (see ``SettledKeys``), in the
  /// order given. Never settled: a key whose local value is `presumed` (taken from the
  /// ledger, not read), one the engine lists as refused (a batch that handles it lifts
  /// the refusal), one whose store state is being taken after a reset, and any key while
  /// the ledger may be stale.
  func partitionSettled(
    _ keys: some Sequence<String>, local: [String: PropertyListValue], remote: [String: PropertyListValue],
    policy: MismatchPolicy, presumed: Set<String>
  ) -> (unsettled: [String], settled: [String]) {
    guard !ledgerMayBeStale, !settled.isEmpty else { return (Array(keys), []) }
    let context = Reconciler.Context(policy: policy, deviceID: deviceID, replicaID: replicaID)
    var split: (unsettled: [String], settled: [String]) = ([], [])
    for key in keys {
      let isSettled =
        settled.holds(
          key, local: local[key], storeValue: remote[key], ledger: ledger[key], takingStore: takesStoreState(key),
          declarations: declarations, context) && !presumed.contains(key) && !refusals.isEngineRefusal(of: key)
      if isSettled { split.settled.append(key) } else { split.unsettled.append(key) }
    }
    return split
  }
}

extension MergeStrategy {
  /// A strategy a settled decision may skip; `nil` for `.custom`, whose rule is user
  /// code and is never skipped.
  fileprivate enum Settled: Sendable, Equatable {
    case lastWriterWins, max, min, union, set, dictionary

    init?(_ strategy: MergeStrategy) {
      switch strategy {
      case .lastWriterWins: self = .lastWriterWins
      case .max: self = .max
      case .min: self = .min
      case .union: self = .union
      case .set: self = .set
      case .dictionary: self = .dictionary
      case .custom: return nil
      }
    }
  }
}

import Foundation

extension LedgerCodec {
  /// Appends a strategy key's state, as the record's state fields in a binary property
  /// list.
  static func appendState(_ state: ReplicaState, to bytes: inout [UInt8]) {
    appendValue(.array(state.encodedFields), to: &bytes)
  }
}

extension ByteReader {
  /// A state written by ``LedgerCodec/appendState(_:to:)``.
  mutating func state() throws(LedgerError) -> ReplicaState {
    guard case .array(let fields)? = try value() else { throw LedgerError.corrupt("state is not a list") }
    switch ReplicaState.decode(fields) {
    case .success(let state): return state
    case .failure(let error): throw LedgerError.corrupt("unreadable state (\(error.reason))")
    }
  }
}

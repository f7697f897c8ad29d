import Foundation

/// The figures of one store size, under the report's JSON names.
struct SizeReport: Codable, Equatable {
  /// What the sections of ``SizeCost`` measured, before they are put in report form.
  struct FirstUpload {
    var nanoseconds: Double
    var writes: Int
    var synchronizeCalls: Int
  }

  struct Steady {
    var median: Double
    var floor: Double
    var writes: Int
    var synchronizeCalls: Int
  }

  struct Floors {
    var keyRead: Double
    var domainRead: Double
  }

  struct Overhead {
    var bytesPerKey: Double
    var storeKeysPerSyncedKey: Double
    var extraKeys: Int
  }

  var keys: Int
  var steadySyncMilliseconds: Double
  var steadyFloorMilliseconds: Double
  var steadySyncOverFloor: Double
  var steadyStoreWrites: Int
  var steadySynchronizeCalls: Int
  var firstUploadMilliseconds: Double
  var firstUploadWrites: Int
  var firstUploadSynchronizeCalls: Int
  var inboundOneKeyMilliseconds: Double
  var inboundOverSteady: Double
  var localEditMilliseconds: Double
  var localEditOverSteady: Double
  var typedSetMilliseconds: Double
  var typedSetOverSteady: Double
  var typedSetFloorMilliseconds: Double
  var typedSetOverFloor: Double
  var foundationKeyReadAfterWriteMilliseconds: Double
  var foundationDomainReadAfterWriteMilliseconds: Double
  var recordOverheadBytesPerKey: Double
  var storeKeysPerSyncedKey: Double
  var extraMetadataKeys: Int

  enum CodingKeys: String, CodingKey {
    case keys
    case steadySyncMilliseconds = "steady_sync_ms"
    case steadyFloorMilliseconds = "steady_floor_ms"
    case steadySyncOverFloor = "steady_sync_over_floor"
    case steadyStoreWrites = "steady_store_writes"
    case steadySynchronizeCalls = "steady_synchronize_calls"
    case firstUploadMilliseconds = "first_upload_ms"
    case firstUploadWrites = "first_upload_writes"
    case firstUploadSynchronizeCalls = "first_upload_synchronize_calls"
    case inboundOneKeyMilliseconds = "inbound_one_key_ms"
    case inboundOverSteady = "inbound_over_steady"
    case localEditMilliseconds = "local_edit_ms"
    case localEditOverSteady = "local_edit_over_steady"
    case typedSetMilliseconds = "typed_set_ms"
    case typedSetOverSteady = "typed_set_over_steady"
    case typedSetFloorMilliseconds = "typed_set_floor_ms"
    case typedSetOverFloor = "typed_set_over_floor"
    case foundationKeyReadAfterWriteMilliseconds = "foundation_key_read_after_write_ms"
    case foundationDomainReadAfterWriteMilliseconds = "foundation_domain_read_after_write_ms"
    case recordOverheadBytesPerKey = "record_overhead_bytes_per_key"
    case storeKeysPerSyncedKey = "store_keys_per_synced_key"
    case extraMetadataKeys = "extra_metadata_keys"
  }

  /// The report of `keys` keys from its sections' figures (times in nanoseconds, medians).
  init(
    keys: Int, upload: FirstUpload, steady: Steady, inbound: Double, localEdit: Double,
    typedSet: (median: Double, floor: Double),
    floors: Floors, overhead: Overhead
  ) {
    self.keys = keys
    steadySyncMilliseconds = milliseconds(steady.median)
    steadyFloorMilliseconds = milliseconds(steady.floor)
    steadySyncOverFloor = ratio(steady.median, steady.floor)
    steadyStoreWrites = steady.writes
    steadySynchronizeCalls = steady.synchronizeCalls
    firstUploadMilliseconds = milliseconds(upload.nanoseconds)
    firstUploadWrites = upload.writes
    firstUploadSynchronizeCalls = upload.synchronizeCalls
    inboundOneKeyMilliseconds = milliseconds(inbound)
    inboundOverSteady = ratio(inbound, steady.median)
    localEditMilliseconds = milliseconds(localEdit)
    localEditOverSteady = ratio(localEdit, steady.median)
    typedSetMilliseconds = milliseconds(typedSet.median)
    typedSetOverSteady = ratio(typedSet.median, steady.median)
    typedSetFloorMilliseconds = milliseconds(typedSet.floor)
    typedSetOverFloor = ratio(typedSet.median, typedSet.floor)
    foundationKeyReadAfterWriteMilliseconds = milliseconds(floors.keyRead)
    foundationDomainReadAfterWriteMilliseconds = milliseconds(floors.domainRead)
    recordOverheadBytesPerKey = overhead.bytesPerKey
    storeKeysPerSyncedKey = overhead.storeKeysPerSyncedKey
    extraMetadataKeys = overhead.extraKeys
  }
}

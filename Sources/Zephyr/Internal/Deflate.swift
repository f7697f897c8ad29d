import Foundation

#if canImport(Compression)
  import Compression
#elseif canImport(CZlib)
  import CZlib
#endif

/// Raw DEFLATE (RFC 1951: no zlib or gzip header, no checksum), both ways, in the same
/// byte format on every platform: Apple's Compression framework (`COMPRESSION_ZLIB`,
/// which is raw DEFLATE) where it exists, the system zlib (`windowBits` -15) on Linux.
///
/// A stream compressed on one platform decompresses on the other; the compressed bytes
/// themselves may differ (each library picks its own blocks), so compare values after
/// decompressing, never the compressed bytes.
///
/// ```swift
/// let packed = try Deflate.compress(json)                  // smaller, for the store
/// let json2 = try Deflate.decompress(packed)               // == json, at most 1 MB
/// ```
package enum Deflate {
  /// Why a stream was refused.
  package enum Failure: Error, Equatable, CustomStringConvertible {
    /// The bytes are not one complete raw DEFLATE stream: garbage, truncated, or followed
    /// by trailing bytes.
    case corrupt
    /// The stream expands to more than `limit` bytes; decompression stopped there.
    case tooLarge(limit: Int)
    /// The platform's library refused to start or to run (out of memory, say).
    case failed
    /// This platform has neither Apple's Compression nor zlib.
    case unavailable

    package var description: String {
      switch self {
      case .corrupt: return "not a raw DEFLATE stream (corrupt, truncated or with trailing bytes)"
      case .tooLarge(let limit): return "decompresses to more than \(limit) bytes"
      case .failed: return "the compression library failed"
      case .unavailable: return "no DEFLATE library on this platform"
      }
    }
  }

  /// The default output limit: the whole iCloud key-value store (1 MB), as no value
  /// Zephyr reads can be larger.
  package static let storeLimit = StoreLimits.iCloud.maximumTotalBytes

  /// The output buffer each step of the stream fills.
  private static let chunk = 65_536

  /// `data` compressed as one raw DEFLATE stream. Throws ``Failure/failed`` only when the
  /// platform library fails (memory), ``Failure/unavailable`` off Apple and Linux.
  package static func compress(_ data: Data) throws(Failure) -> Data {
    try run(encoding: true, data, limit: Int.max)
  }

  /// The bytes `stream` decompresses to, refused with ``Failure/tooLarge(limit:)`` as soon
  /// as they pass `limit`, and with ``Failure/corrupt`` unless `stream` is exactly one
  /// complete raw DEFLATE stream. Never traps, whatever the input.
  package static func decompress(_ stream: Data, limit: Int = storeLimit) throws(Failure) -> Data {
    guard !stream.isEmpty else { throw .corrupt }
    return try run(encoding: false, stream, limit: limit)
  }

  /// Copies the input to a buffer of its own, so that the C libraries get a stable,
  /// non-null pointer whatever `Data`'s storage (an empty `Data` has no base address).
  private static func run(encoding: Bool, _ data: Data, limit: Int) throws(Failure) -> Data {
    let input = UnsafeMutablePointer<UInt8>.allocate(capacity: max(data.count, 1))
    defer { input.deallocate() }
    data.copyBytes(to: input, count: data.count)
    let output = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
    defer { output.deallocate() }
    return try stream(encoding: encoding, input: input, count: data.count, buffer: output, limit: limit)
  }
}

#if canImport(Compression)
  extension Deflate {
    /// One `compression_stream` run over the whole input, with `FINALIZE` from the start.
    private static func stream(
      encoding: Bool, input: UnsafeMutablePointer<UInt8>, count: Int, buffer: UnsafeMutablePointer<UInt8>, limit: Int
    ) throws(Failure) -> Data {
      let stream = UnsafeMutablePointer<compression_stream>.allocate(capacity: 1)
      defer { stream.deallocate() }
      let operation = encoding ? COMPRESSION_STREAM_ENCODE : COMPRESSION_STREAM_DECODE
      guard compression_stream_init(stream, operation, COMPRESSION_ZLIB) == COMPRESSION_STATUS_OK else {
        throw .failed
      }
      defer { compression_stream_destroy(stream) }
      stream.pointee.src_ptr = UnsafePointer(input)
      stream.pointee.src_size = count
      let finalize = Int32(bitPattern: COMPRESSION_STREAM_FINALIZE.rawValue)
      var output = Data()
      while true {
        stream.pointee.dst_ptr = buffer
        stream.pointee.dst_size = chunk
        let status = compression_stream_process(stream, finalize)
        let produced = chunk - stream.pointee.dst_size
        output.append(buffer, count: produced)
        if output.count > limit { throw .tooLarge(limit: limit) }
        switch status {
        case COMPRESSION_STATUS_END:
          guard stream.pointee.src_size == 0 else { throw .corrupt }
          return output
        case COMPRESSION_STATUS_OK:
          // All input read, room left, no end: the stream stops short of its last block.
          if produced < chunk, stream.pointee.src_size == 0, !encoding { throw .corrupt }
        default:
          throw encoding ? .failed : .corrupt
        }
      }
    }
  }
#elseif canImport(CZlib)
  extension Deflate {
    /// One zlib `deflate`/`inflate` run over the whole input (windowBits -15: raw).
    private static func stream(
      encoding: Bool, input: UnsafeMutablePointer<UInt8>, count: Int, buffer: UnsafeMutablePointer<UInt8>, limit: Int
    ) throws(Failure) -> Data {
      guard let available = UInt32(exactly: count) else { throw .tooLarge(limit: Int(UInt32.max)) }
      // zlib keeps a pointer back to the z_stream and checks it: the stream needs a fixed address.
      let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
      stream.initialize(to: z_stream())
      defer { stream.deallocate() }
      let size = Int32(MemoryLayout<z_stream>.size)
      let started =
        encoding
        ? deflateInit2_(stream, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY, zlibVersion(), size)
        : inflateInit2_(stream, -15, zlibVersion(), size)
      guard started == Z_OK else { throw .failed }
      defer { _ = encoding ? deflateEnd(stream) : inflateEnd(stream) }
      stream.pointee.next_in = input
      stream.pointee.avail_in = available
      var output = Data()
      while true {
        stream.pointee.next_out = buffer
        stream.pointee.avail_out = UInt32(chunk)
        let status = encoding ? deflate(stream, Z_FINISH) : inflate(stream, Z_NO_FLUSH)
        output.append(buffer, count: chunk - Int(stream.pointee.avail_out))
        if output.count > limit { throw .tooLarge(limit: limit) }
        switch status {
        case Z_STREAM_END:
          guard stream.pointee.avail_in == 0 else { throw .corrupt }
          return output
        case Z_OK:
          continue
        default:
          // Z_BUF_ERROR here means no progress is possible: the input ends mid-stream.
          throw encoding ? .failed : .corrupt
        }
      }
    }
  }
#else
  extension Deflate {
    private static func stream(
      encoding: Bool, input: UnsafeMutablePointer<UInt8>, count: Int, buffer: UnsafeMutablePointer<UInt8>, limit: Int
    ) throws(Failure) -> Data {
      throw .unavailable
    }
  }
#endif

import Foundation

/// A classic pcap file (not pcapng) read in large chunks into one reused buffer, its records
/// walked in place. perf showed the mapped reader (mmap, pages released every 8 MiB) spending
/// half its time on page faults, unmapping and a cache miss at every record header; read(2)
/// of 128 KiB at a time streams the bytes into a buffer that stays in the core's cache, costs
/// one syscall per chunk and no copy per packet, and keeps the resident size to that buffer
/// (libpcap freads every record into its buffer, the copy tcpdump pays). The file header was
/// already checked by libpcap (``PcapFileReader``); this reads the records, and reports
/// damage as libpcap does: the packets before it delivered, then an error naming the record.
final class BufferedPcapFile {
  private let fd: Int32
  private let swapped: Bool
  private let nanosecond: Bool
  private let snapLength: Int

  /// The largest captured length libpcap accepts in a record (its maximum snapshot length).
  static let maximumCapturedLength = 262_144
  /// Holds the largest record (16-byte header and its bytes) and a chunk.
  static let bufferSize = 512 << 10
  static let chunkSize = 128 << 10

  /// Opens `path`; nil when it is not a classic pcap file or cannot be read (the caller then
  /// reads it with libpcap).
  init?(path: String) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    var header = [UInt8](repeating: 0, count: 24)
    guard pread(fd, &header, 24, 0) == 24 else {
      close(fd)
      return nil
    }
    _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
    let magic =
      UInt32(header[0]) | UInt32(header[1]) << 8 | UInt32(header[2]) << 16
      | UInt32(header[3]) << 24
    switch magic {
    case 0xA1B2_C3D4: (swapped, nanosecond) = (false, false)
    case 0xD4C3_B2A1: (swapped, nanosecond) = (true, false)
    case 0xA1B2_3C4D: (swapped, nanosecond) = (false, true)
    case 0x4D3C_B2A1: (swapped, nanosecond) = (true, true)
    default:
      close(fd)
      return nil
    }
    self.fd = fd
    let snap =
      UInt32(header[16]) | UInt32(header[17]) << 8 | UInt32(header[18]) << 16
      | UInt32(header[19]) << 24
    snapLength = Int(swapped ? snap.byteSwapped : snap)
  }

  deinit { close(fd) }

  /// Calls `body` with each record (timestamp in ns, original length, captured bytes valid
  /// during the call). Throws, after delivering what came before, at a record cut short or
  /// with an impossible length, with the record number and byte offset.
  func forEachPacket(
    path: String,
    _ body: (_ timestamp: Int64, _ wireLength: Int, _ frame: UnsafeRawBufferPointer) -> Void
  ) throws -> Int {
    let capacity = Self.bufferSize
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64)
    defer { buffer.deallocate() }
    // Bytes start..<end of the buffer are unread records; `offset` is the file offset of
    // buffer[start]; `readOffset` where the next read starts.
    var start = 0
    var end = 0
    var offset = 24
    var readOffset: off_t = 24
    var atEnd = false
    var count = 0
    let scale: Int64 = nanosecond ? 1 : 1000
    let swapped = swapped

    // Moves what is left to the front and reads a chunk, or what the next record needs.
    func refill(need: Int) throws {
      let left = end - start
      if left > 0 && start > 0 { memmove(buffer, buffer + start, left) }
      start = 0
      end = left
      // A chunk at a time, not the whole buffer: 128 KiB stays in the core's cache beside the
      // auditor's flow table, where 512 KiB reads evicted it (perf: a cache miss at every
      // flow lookup). More only when a record is larger than what is left.
      let wanted = max(Self.chunkSize, need)
      while end < wanted && !atEnd {
        let got = pread(fd, buffer + end, wanted - end, readOffset)
        if got < 0 {
          if errno == EINTR { continue }
          throw CaptureError(
            "\(path): read failed at byte offset \(readOffset): \(String(cString: strerror(errno))) "
              + "(\(count) packets before it were read)")
        }
        if got == 0 {
          atEnd = true
          break
        }
        end += got
        readOffset += off_t(got)
      }
    }
    @inline(__always)
    func word(_ at: Int) -> UInt32 {
      let value = buffer.loadUnaligned(fromByteOffset: at, as: UInt32.self)
      return swapped ? value.byteSwapped : value
    }
    func damage(_ reason: String) -> CaptureError {
      CaptureError(
        "\(path): packet \(count + 1) at byte offset \(offset) is unreadable: \(reason) "
          + "(\(count) packets before it were read)")
    }

    while true {
      if end - start < 16 {
        if !atEnd { try refill(need: 16) }
        if end == start { return count }
        guard end - start >= 16 else {
          throw damage(
            "truncated dump file; tried to read 16 header bytes, only got \(end - start)")
        }
      }
      let seconds = Int64(word(start))
      let fraction = Int64(word(start + 4))
      let captured = Int(word(start + 8))
      let original = Int(word(start + 12))
      guard captured <= Self.maximumCapturedLength else {
        throw damage(
          "invalid packet capture length \(captured), bigger than maximum of "
            + "\(Self.maximumCapturedLength)")
      }
      if end - start - 16 < captured {
        if !atEnd { try refill(need: 16 + captured) }
        guard end - start - 16 >= captured else {
          throw damage(
            "truncated dump file; tried to read \(captured) captured bytes, only got "
              + "\(end - start - 16)")
        }
      }
      // libpcap hands back at most the file's snapshot length of a longer record.
      let delivered = snapLength > 0 ? min(captured, snapLength) : captured
      body(
        seconds * 1_000_000_000 + fraction * scale, original,
        UnsafeRawBufferPointer(start: buffer + start + 16, count: delivered))
      count += 1
      start += 16 + captured
      offset += 16 + captured
    }
  }
}

import Foundation

/// A classic pcap file (not pcapng) walked in place through mmap: a packet costs no read
/// syscall and no copy, where libpcap's reader freads every record into its buffer (the
/// copy tcpdump pays too). The file header was already checked by libpcap
/// (``PcapFileReader``); this reads the records, and reports damage as libpcap does: the
/// packets before it delivered, then an error naming the record.
final class MappedPcapFile {
  private let base: UnsafeRawPointer
  private let size: Int
  private let swapped: Bool
  private let nanosecond: Bool
  private let snapLength: Int

  /// The largest captured length libpcap accepts in a record (its maximum snapshot length).
  static let maximumCapturedLength = 262_144

  /// Maps `path`; nil when it is not a classic pcap file or cannot be mapped (the caller then
  /// reads it with libpcap).
  init?(path: String) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0, status.st_size >= 24 else { return nil }
    let size = Int(status.st_size)
    guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED
    else { return nil }
    _ = madvise(mapped, size, MADV_SEQUENTIAL)
    let base = UnsafeRawPointer(mapped)
    let magic = base.loadUnaligned(as: UInt32.self)
    switch magic {
    case 0xA1B2_C3D4: (swapped, nanosecond) = (false, false)
    case 0xD4C3_B2A1: (swapped, nanosecond) = (true, false)
    case 0xA1B2_3C4D: (swapped, nanosecond) = (false, true)
    case 0x4D3C_B2A1: (swapped, nanosecond) = (true, true)
    default:
      munmap(mapped, size)
      return nil
    }
    self.base = base
    self.size = size
    let snap = base.loadUnaligned(fromByteOffset: 16, as: UInt32.self)
    snapLength = Int(swapped ? snap.byteSwapped : snap)
  }

  deinit { munmap(UnsafeMutableRawPointer(mutating: base), size) }

  @inline(__always)
  private func word(_ offset: Int) -> UInt32 {
    let value = base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
    return swapped ? value.byteSwapped : value
  }

  /// Calls `body` with each record (timestamp in ns, original length, captured bytes valid
  /// during the call). Throws, after delivering what came before, at a record cut short or
  /// with an impossible length, with the record number and byte offset.
  func forEachPacket(
    path: String,
    _ body: (_ timestamp: Int64, _ wireLength: Int, _ frame: UnsafeRawBufferPointer) -> Void
  ) throws -> Int {
    var offset = 24
    var count = 0
    let scale: Int64 = nanosecond ? 1 : 1000
    // Pages already read are released every 8 MiB, so the resident size stays flat however
    // long the file (the pages stay in the page cache; only this mapping lets go of them).
    let window = 8 << 20
    var released = 0
    while offset < size {
      if offset - released >= 2 * window {
        let end = (offset - window) & ~(Int(getpagesize()) - 1)
        _ = madvise(
          UnsafeMutableRawPointer(mutating: base + released), end - released, MADV_DONTNEED)
        released = end
      }
      func damage(_ reason: String) -> CaptureError {
        CaptureError(
          "\(path): packet \(count + 1) at byte offset \(offset) is unreadable: \(reason) "
            + "(\(count) packets before it were read)")
      }
      guard size - offset >= 16 else {
        throw damage(
          "truncated dump file; tried to read 16 header bytes, only got \(size - offset)")
      }
      let seconds = Int64(word(offset))
      let fraction = Int64(word(offset + 4))
      let captured = Int(word(offset + 8))
      let original = Int(word(offset + 12))
      guard captured <= Self.maximumCapturedLength else {
        throw damage(
          "invalid packet capture length \(captured), bigger than maximum of "
            + "\(Self.maximumCapturedLength)")
      }
      guard size - offset - 16 >= captured else {
        throw damage(
          "truncated dump file; tried to read \(captured) captured bytes, only got "
            + "\(size - offset - 16)")
      }
      // libpcap hands back at most the file's snapshot length of a longer record.
      let delivered = snapLength > 0 ? min(captured, snapLength) : captured
      body(
        seconds * 1_000_000_000 + fraction * scale, original,
        UnsafeRawBufferPointer(start: base + offset + 16, count: delivered))
      count += 1
      offset += 16 + captured
    }
    return count
  }
}

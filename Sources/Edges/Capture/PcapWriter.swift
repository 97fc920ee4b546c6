import Audit
import CPcap
import FailClosedSupport
import Foundation

/// Writes a pcap file (nanosecond timestamps) with pcap_dump, readable by tshark, tcpdump
/// and Wireshark. For a live capture, `LiveCapture` opens its writer on the live handle.
///
/// pcap_dump writes through stdio and reports nothing: a full disk would leave a short file
/// that the report names as the run's capture. The writer looks at the stream's error flag
/// after each frame and flushes before closing, and keeps the first failure (``failure``);
/// the bytes already written stay.
public final class PcapWriter {
  public let path: String
  private var dead: OpaquePointer?
  private var dumper: OpaquePointer?
  /// Why the file is not whole ("ENOSPC (No space left on device)" and how many frames were
  /// handed to it), nil while every write went through.
  public private(set) var failure: String?
  private var frames = 0

  /// A writer for frames built in memory (tests, the generator).
  public init(path: String, linkType: LinkType, snapLength: Int32 = 65535) throws {
    self.path = path
    // libpcap takes DLT_ values: LINKTYPE_RAW (101) in files is DLT_RAW (12) here.
    let dlt = linkType == .raw ? LinkType.rawDLT.rawValue : linkType.rawValue
    guard
      let dead = pcap_open_dead_with_tstamp_precision(
        dlt, snapLength, UInt32(PCAP_TSTAMP_PRECISION_NANO))
    else { throw CaptureError("\(path): pcap_open_dead failed") }
    guard let dumper = pcap_dump_open(dead, path) else {
      let reason = CString.text(pcap_geterr(dead))
      pcap_close(dead)
      throw CaptureError("\(path): cannot create pcap file: \(reason)")
    }
    self.dead = dead
    self.dumper = dumper
  }

  /// A writer on an open live handle (same link type and precision as the capture).
  init(path: String, handle: OpaquePointer) throws {
    self.path = path
    guard let dumper = pcap_dump_open(handle, path) else {
      throw CaptureError("\(path): cannot create pcap file: \(CString.text(pcap_geterr(handle)))")
    }
    self.dumper = dumper
  }

  deinit { close() }

  public func write(timestamp: Int64, wireLength: Int, frame: UnsafeRawBufferPointer) {
    guard let dumper else { return }
    var header = pcap_pkthdr()
    header.ts.tv_sec = Int(timestamp / 1_000_000_000)
    header.ts.tv_usec = Int(timestamp % 1_000_000_000)
    header.caplen = UInt32(frame.count)
    header.len = UInt32(max(wireLength, frame.count))
    writeRaw(dumper, &header, frame)
  }

  public func write(timestamp: Int64, frame: [UInt8]) {
    frame.withUnsafeBytes { write(timestamp: timestamp, wireLength: $0.count, frame: $0) }
  }

  @inline(__always)
  func writeRaw(
    _ dumper: OpaquePointer, _ header: UnsafePointer<pcap_pkthdr>, _ frame: UnsafeRawBufferPointer
  ) {
    guard let base = frame.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    pcap_dump(UnsafeMutableRawPointer(dumper).assumingMemoryBound(to: UInt8.self), header, base)
    frames += 1
    if failure == nil, let file = pcap_dump_file(dumper), ferror(file) != 0 { noteFailure(errno) }
  }

  private func noteFailure(_ code: Int32) {
    guard failure == nil else { return }
    let error = SystemError("write", code: code)
    failure =
      "\(path): \(error.symbol) (\(String(cString: strerror(code)))) after \(frames) frame"
      + (frames == 1 ? "" : "s") + ": the file holds only what was written before"
  }

  /// Passes a live capture's header through unchanged.
  func write(header: UnsafePointer<pcap_pkthdr>, frame: UnsafeRawBufferPointer) {
    guard let dumper else { return }
    writeRaw(dumper, header, frame)
  }

  public func flush() {
    if let dumper { pcap_dump_flush(dumper) }
  }

  public func close() {
    if let dumper {
      if pcap_dump_flush(dumper) != 0 { noteFailure(errno) }
      pcap_dump_close(dumper)
    }
    dumper = nil
    if let dead { pcap_close(dead) }
    dead = nil
  }
}

import Audit
import CPcap
import Foundation

/// Reads a pcap or pcapng file with libpcap (pcap_open_offline), timestamps in nanoseconds.
public final class PcapFileReader {
  public let path: String
  public let linkType: LinkType
  public let rawLinkType: Int32
  private var handle: OpaquePointer?

  public init(path: String) throws {
    self.path = path
    var errorBuffer = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE))
    guard
      let handle = pcap_open_offline_with_tstamp_precision(
        path, UInt32(PCAP_TSTAMP_PRECISION_NANO), &errorBuffer)
    else {
      throw CaptureError("\(path): cannot open as a pcap file: \(CString.text(errorBuffer))")
    }
    let raw = pcap_datalink(handle)
    guard let linkType = LinkType(rawValue: raw) else {
      pcap_close(handle)
      let name = pcap_datalink_val_to_name(raw).map { CString.text($0) } ?? "unknown"
      throw CaptureError(
        "\(path): link type \(raw) (\(name)) is not supported (supported: Ethernet, "
          + "Linux cooked SLL and SLL2, raw IP, NULL/LOOP)")
    }
    self.handle = handle
    self.linkType = linkType
    self.rawLinkType = raw
  }

  deinit { close() }

  public func close() {
    if let handle { pcap_close(handle) }
    handle = nil
  }

  /// Classic pcap (not pcapng): records are a 16-byte header and the captured bytes, after a
  /// 24-byte file header, so the offset of a damaged record is known without asking the file.
  private lazy var isClassicPcap: Bool = {
    guard let file = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? file.close() }
    let magic = [UInt8](file.readData(ofLength: 4))
    return [
      [0xA1, 0xB2, 0xC3, 0xD4], [0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D],
      [0x4D, 0x3C, 0xB2, 0xA1],
    ].contains(magic)
  }()

  /// Where reading stopped, for pcapng files (asked once, at the error).
  private var endOffset: Int? {
    guard let handle, let file = pcap_file(handle) else { return nil }
    let position = ftell(file)
    return position >= 0 ? position : nil
  }

  /// Calls `body` with each packet: timestamp (ns since the epoch), original length and the
  /// captured bytes (valid only during the call). Returns the number of packets read; throws
  /// after the packets before the damage were delivered, naming the file, the packet number
  /// and the byte offset.
  @discardableResult
  public func forEachPacket(
    _ body: (_ timestamp: Int64, _ wireLength: Int, _ frame: UnsafeRawBufferPointer) -> Void
  ) throws -> Int {
    guard let handle else { throw CaptureError("\(path): reader is closed") }
    // Classic pcap: read in large chunks, walked in place (no copy or read per packet); pcapng
    // through libpcap.
    if isClassicPcap, let file = BufferedPcapFile(path: path) {
      return try file.forEachPacket(path: path, body)
    }
    var count = 0
    // Tracked by arithmetic, not ftell: a syscall per packet would dominate the audit.
    var recordOffset = 24
    var header: UnsafeMutablePointer<pcap_pkthdr>?
    var data: UnsafePointer<UInt8>?
    while true {
      let result = pcap_next_ex(handle, &header, &data)
      if result == 1, let header, let data {
        guard
          let stamp = Self.nanoseconds(
            seconds: Int64(header.pointee.ts.tv_sec), fraction: Int64(header.pointee.ts.tv_usec))
        else {
          // A pcapng timestamp past 2262 (or a huge if_tsoffset) does not fit in Int64
          // nanoseconds: damage, not a crash.
          throw CaptureError(
            "\(path): packet \(count + 1) has a timestamp out of range (\(header.pointee.ts.tv_sec) s "
              + "since 1970, past the year 2262; a huge if_tsoffset?) (\(count) packets before it "
              + "were read)")
        }
        body(
          stamp, Int(header.pointee.len),
          UnsafeRawBufferPointer(start: data, count: Int(header.pointee.caplen)))
        count += 1
        recordOffset += 16 + Int(header.pointee.caplen)
        continue
      }
      if result == PCAP_ERROR_BREAK { return count }
      let reason = CString.text(pcap_geterr(handle))
      let place =
        isClassicPcap
        ? "byte offset \(recordOffset)"
        : endOffset.map { "a record before byte offset \($0)" } ?? "an unknown offset"
      throw CaptureError(
        "\(path): packet \(count + 1) at \(place) is unreadable: \(reason) "
          + "(\(count) packets before it were read)")
    }
  }

  /// `seconds` and the nanoseconds within it as nanoseconds since the epoch, or nil when
  /// that does not fit in Int64 (before 1677 or after 2262).
  static func nanoseconds(seconds: Int64, fraction: Int64) -> Int64? {
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return nil }
    let (sum, carry) = scaled.addingReportingOverflow(fraction)
    return carry ? nil : sum
  }

  /// Audits the whole file. A damaged file keeps every packet read before the damage and
  /// turns the verdict inconclusive (a leak found before it is still a leak).
  public static func audit(path: String, policy: AuditPolicy) throws -> AuditReport {
    let reader = try PcapFileReader(path: path)
    defer { reader.close() }
    let auditor = Auditor(linkType: reader.linkType, policy: policy)
    do {
      try reader.forEachPacket { auditor.consume(timestamp: $0, wireLength: $1, frame: $2) }
    } catch let error as CaptureError {
      auditor.noteInconclusive(InconclusiveReason(.unreadableFile, error.message))
    }
    return auditor.report()
  }
}

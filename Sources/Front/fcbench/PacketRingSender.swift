import FailClosedSupport
import Foundation
import Sandbox

/// Sends ready-made Ethernet frames (IPv4/UDP to the sink) through AF_PACKET sockets with a
/// memory-mapped transmit ring (PACKET_TX_RING, TPACKET_V2): the frames are written into the
/// ring once, and each send(2) hands the kernel a whole batch with no per-packet copy from user
/// space, no route lookup and no UDP socket. The connected-UDP sender (``PacedSender``) topped
/// out near 290k packets/s on this machine, below what the capture takes with its default
/// ring, so the capture's own edge was never found.
///
/// The frames still go through dev_queue_xmit (the veth has no queue), which hands every
/// outgoing frame to the packet taps: the device capture sees them as it sees an app's.
/// PACKET_QDISC_BYPASS would skip that hand-over (the capture would see nothing) and is
/// only an option, for showing exactly that.
struct PacketRingSender: FidelitySender {
  /// One AF_PACKET socket and its mapped ring per sending thread.
  final class Ring: @unchecked Sendable {
    let descriptor: Int32
    let base: UnsafeMutableRawPointer
    let frameSize: Int
    let frameCount: Int
    let mappedBytes: Int
    let frameLength: Int
    /// The next frame to fill: the kernel walks the ring in the same order and keeps its
    /// place between send(2) calls, so this one must too (one sending thread per ring).
    var next = 0

    init(
      descriptor: Int32, base: UnsafeMutableRawPointer, frameSize: Int, frameCount: Int,
      frameLength: Int
    ) {
      self.descriptor = descriptor
      self.base = base
      self.frameSize = frameSize
      self.frameCount = frameCount
      self.mappedBytes = frameSize * frameCount
      self.frameLength = frameLength
    }

    func close() {
      munmap(base, mappedBytes)
      Glibc.close(descriptor)
    }
  }

  // Kernel ABI (linux/if_packet.h, linux/if_ether.h), absent from Glibc's Swift overlay.
  static let solPacket: Int32 = 263
  static let packetVersion: Int32 = 10
  static let packetTXRing: Int32 = 13
  static let packetQdiscBypass: Int32 = 20
  static let tpacketV2: Int32 = 1
  static let etherTypeIPv4: UInt16 = 0x0800
  /// tp_status values of a transmit frame.
  static let statusAvailable: UInt32 = 0
  static let statusSendRequest: UInt32 = 1
  static let statusSending: UInt32 = 2
  static let statusWrongFormat: UInt32 = 4
  /// Without PACKET_TX_HAS_OFF a V2 frame's data starts right after its 32-byte tpacket2_hdr.
  static let dataOffset = 32

  let rings: [Ring]
  let batch: Int
  let qdiscBypass: Bool

  var name: String { "AF_PACKET TX ring" + (qdiscBypass ? " (qdisc bypass)" : "") }
  var threads: Int { rings.count }

  /// Opens `threads` sockets in the device namespace on its veth, each with a ring full of
  /// copies of one frame: device to `sink` (UDP, `payloadBytes` of payload), with the veth
  /// ends' own hardware addresses.
  static func open(
    _ sandbox: SandboxRun, frame: [UInt8], threads: Int, batch: Int, qdiscBypass: Bool
  ) throws -> PacketRingSender {
    var rings: [Ring] = []
    do {
      for _ in 0..<threads {
        let fd = try sandbox.device.perform {
          try packetSocket(interface: AddressPlan.deviceInterface, qdiscBypass: qdiscBypass)
        }
        do {
          rings.append(try attachRing(fd, frame: frame))
        } catch {
          Glibc.close(fd)
          throw error
        }
      }
    } catch {
      for ring in rings { ring.close() }
      throw error
    }
    return PacketRingSender(rings: rings, batch: batch, qdiscBypass: qdiscBypass)
  }

  /// The load's frame: device to `sink` (UDP, `payloadBytes` of payload), with the veth
  /// ends' own hardware addresses.
  static func loadFrame(_ sandbox: SandboxRun, sink: SocketAddress, payloadBytes: Int) throws
    -> [UInt8]
  {
    let censorMAC = try sandbox.censor.perform { try hardwareAddress("dev0") }
    return try sandbox.device.perform { () -> [UInt8] in
      let deviceMAC = try hardwareAddress(AddressPlan.deviceInterface)
      return udpFrame(
        from: deviceMAC, to: censorMAC,
        source: SocketAddress(host: AddressPlan.deviceV4, port: 40_000)!, destination: sink,
        payloadBytes: payloadBytes)
    }
  }

  func close() { for ring in rings { ring.close() } }

  func send(rate: Double?, seconds: Double) -> SendOutcome {
    let share = rate.map { $0 / Double(rings.count) }
    let results = Locked<[SendOutcome]>([])
    let group = DispatchGroup()
    for ring in rings {
      group.enter()
      let batch = batch
      let thread = Thread {
        let outcome = Self.sendFrom(ring, batch: batch, rate: share, seconds: seconds)
        results.withLock { $0.append(outcome) }
        group.leave()
      }
      thread.start()
    }
    group.wait()
    return SendOutcome.combined(results.withLock { $0 })
  }

  /// Paced as ``PacedSender`` is: catch up with `rate × elapsed` in batches, sleep when ahead.
  private static func sendFrom(_ ring: Ring, batch: Int, rate: Double?, seconds: Double)
    -> SendOutcome
  {
    let clock = SystemClock()
    let startCPU = SendOutcome.threadCPUSeconds()
    var outcome = SendOutcome()
    while true {
      outcome.seconds = clock.now
      if outcome.seconds >= seconds { break }
      let done = outcome.sent + outcome.failed
      let due = rate.map { Int($0 * outcome.seconds) + 1 } ?? (done + batch)
      let count = min(due - done, batch)
      if count <= 0 {
        let wait = (Double(done + 1) / (rate ?? 1) - outcome.seconds) * 1e6
        usleep(UInt32(max(20, min(1000, wait))))
        continue
      }
      var queued = 0
      while queued < count {
        let header = ring.base + ring.next * ring.frameSize
        let status = header.load(as: UInt32.self)
        if status & (statusSendRequest | statusSending) != 0 { break }  // the ring is full
        if status & statusWrongFormat != 0 { outcome.failed += 1 }
        header.storeBytes(of: UInt32(ring.frameLength), toByteOffset: 4, as: UInt32.self)
        header.storeBytes(of: statusSendRequest, as: UInt32.self)
        ring.next = (ring.next + 1) % ring.frameCount
        queued += 1
      }
      if queued == 0 {
        // Nothing free yet: let the kernel finish the frames it holds.
        _ = Glibc.send(ring.descriptor, nil, 0, 0)
        continue
      }
      // Blocking: returns once the kernel has taken every requested frame.
      let bytes = Glibc.send(ring.descriptor, nil, 0, 0)
      if bytes >= 0 {
        let sent = bytes / ring.frameLength
        outcome.sent += sent
        outcome.failed += max(0, queued - sent)
      } else {
        outcome.failed += queued
      }
    }
    outcome.cpuSeconds = SendOutcome.threadCPUSeconds() - startCPU
    return outcome
  }

  /// The interface's hardware address (SIOCGIFHWADDR), in the calling thread's namespace.
  static func hardwareAddress(_ interface: String) throws -> [UInt8] {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw SystemError("socket(for SIOCGIFHWADDR)") }
    defer { Glibc.close(fd) }
    var request = ifreq()
    withUnsafeMutableBytes(of: &request.ifr_ifrn.ifrn_name) { name in
      for (index, byte) in interface.utf8.prefix(name.count - 1).enumerated() {
        name[index] = byte
      }
    }
    guard ioctl(fd, UInt(SIOCGIFHWADDR), &request) == 0 else {
      throw SystemError("SIOCGIFHWADDR(\(interface))")
    }
    return withUnsafeBytes(of: request.ifr_ifru.ifru_hwaddr.sa_data) { Array($0.prefix(6)) }
  }

  /// Ethernet, IPv4 (DF, TTL 64, header checksum) and UDP (checksum 0: none, allowed on IPv4).
  static func udpFrame(
    from sourceMAC: [UInt8], to destinationMAC: [UInt8], source: SocketAddress,
    destination: SocketAddress, payloadBytes: Int
  ) -> [UInt8] {
    func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    var ip: [UInt8] = [0x45, 0] + be16(20 + 8 + payloadBytes) + [0, 0, 0x40, 0, 64, 17, 0, 0]
    ip += source.bytes + destination.bytes
    var sum = 0
    for index in stride(from: 0, to: 20, by: 2) { sum += Int(ip[index]) << 8 | Int(ip[index + 1]) }
    while sum > 0xFFFF { sum = (sum & 0xFFFF) + (sum >> 16) }
    let checksum = be16(~sum & 0xFFFF)
    ip[10] = checksum[0]
    ip[11] = checksum[1]
    let udp =
      be16(Int(source.port)) + be16(Int(destination.port)) + be16(8 + payloadBytes) + [0, 0]
    return destinationMAC + sourceMAC + be16(Int(etherTypeIPv4)) + ip + udp
      + [UInt8](repeating: 0x5A, count: payloadBytes)
  }

  /// An AF_PACKET socket bound to `interface` (protocol IPv4, so the taps label the frames
  /// as IPv4), TPACKET_V2 for a ring. Call on a thread inside the interface's namespace.
  static func packetSocket(interface: String, qdiscBypass: Bool) throws -> Int32 {
    let protocolBE = Int32(etherTypeIPv4.bigEndian)
    let fd = socket(AF_PACKET, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), protocolBE)
    guard fd >= 0 else { throw SystemError("socket(AF_PACKET)") }
    func option(_ name: Int32, _ value: Int32, _ what: String) throws {
      var value = value
      guard setsockopt(fd, solPacket, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0
      else {
        let error = SystemError("setsockopt(\(what))")
        Glibc.close(fd)
        throw error
      }
    }
    try option(packetVersion, tpacketV2, "PACKET_VERSION")
    if qdiscBypass { try option(packetQdiscBypass, 1, "PACKET_QDISC_BYPASS") }
    // struct sockaddr_ll: family, protocol, ifindex, hatype, pkttype, halen, addr[8].
    var address = [UInt8](repeating: 0, count: 20)
    let index = if_nametoindex(interface)
    address.withUnsafeMutableBytes { raw in
      raw.storeBytes(of: UInt16(AF_PACKET), toByteOffset: 0, as: UInt16.self)
      raw.storeBytes(of: etherTypeIPv4.bigEndian, toByteOffset: 2, as: UInt16.self)
      raw.storeBytes(of: Int32(index), toByteOffset: 4, as: Int32.self)
    }
    let bound = address.withUnsafeBytes {
      bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), 20)
    }
    guard index != 0, bound == 0 else {
      let error = SystemError("bind(AF_PACKET \(interface))")
      Glibc.close(fd)
      throw error
    }
    return fd
  }

  /// A TPACKET_V2 transmit ring on `fd` whose every frame holds `frame`.
  static func attachRing(_ fd: Int32, frame: [UInt8]) throws -> Ring {
    // Frames of 256 bytes (2048 for large payloads) in blocks of 64 KiB: 4,096 or 512 frames.
    let frameSize = dataOffset + frame.count <= 256 ? 256 : 2048
    let blockSize = 1 << 16
    let blockCount = 16
    let frameCount = blockSize / frameSize * blockCount
    // struct tpacket_req: block_size, block_nr, frame_size, frame_nr.
    var request: [UInt32] = [
      UInt32(blockSize), UInt32(blockCount), UInt32(frameSize), UInt32(frameCount),
    ]
    guard setsockopt(fd, solPacket, packetTXRing, &request, socklen_t(16)) == 0 else {
      throw SystemError("setsockopt(PACKET_TX_RING)")
    }
    let bytes = frameSize * frameCount
    guard let mapped = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0),
      mapped != MAP_FAILED
    else {
      throw SystemError("mmap(PACKET_TX_RING)")
    }
    for slot in 0..<frameCount {
      let header = mapped + slot * frameSize
      header.initializeMemory(as: UInt8.self, repeating: 0, count: dataOffset)
      frame.withUnsafeBytes {
        (header + dataOffset).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
      }
    }
    return Ring(
      descriptor: fd, base: mapped, frameSize: frameSize, frameCount: frameCount,
      frameLength: frame.count)
  }
}

import Audit
import Capture
import FailClosedSupport
import Foundation
import Sandbox

/// Capture fidelity across the sandbox link: UDP datagrams of a fixed size go from the device
/// to a sink on the censor's side of the veth (an allowed destination, so a clean run is a
/// pass) at a target rate for a fixed time, with failclosed's device capture on; pcap_stats
/// says how many the capture dropped and the report gives the verdict. The rate is searched
/// (doubling, then bisection) for the highest one with zero drops; above it the verdict must
/// be inconclusive, never pass. tcpdump, with the same snaplen, immediate mode and buffer
/// size, captures the same link at the same rates for comparison.
enum CaptureFidelity {
  struct Options {
    var seconds = 10.0
    var payloadBytes = 64
    var bufferBytes: Int32 = 32 << 20
    var bisectionSteps = 4
    /// Sending threads (one socket each). More threads than cores: the scheduler shares the
    /// cores per thread, so eight take a larger share from the capture's one, as a busy app
    /// does (at flat out the default ring dropped in 3 of 5 probes with eight, 1 of 6 with four).
    var threads = 8
    /// "ring": AF_PACKET sockets with a transmit ring (``PacketRingSender``); "packet":
    /// AF_PACKET sockets with sendmmsg; "udp": connected UDP sockets with sendmmsg
    /// (``PacedSender``), the sender before them.
    var sender = "ring"
    /// Frames handed to the kernel per send(2) by the ring sender.
    var batch = 1024
    /// PACKET_QDISC_BYPASS on the ring sender's sockets (the capture then sees nothing).
    var qdiscBypass = false
    /// Drops the load where it enters the censor (an nftables ingress hook on its end of the
    /// veth), after the device's link and its capture have seen every packet, instead of in
    /// the sink's full socket: the censor's routing and UDP receive then cost the sending
    /// core nothing.
    var dropAtIngress = true
  }

  struct Probe: Codable {
    var tool: String
    /// Packets per second asked for; nil: as fast as one sending thread goes.
    var targetRate: Double?
    var sent: Int
    var sendFailures: Int
    var seconds: Double
    var sentRate: Double
    var received: UInt64
    /// Dropped at either end of the link (failclosed: the device's capture plus the far
    /// end's; a drop at either makes the verdict inconclusive, so the search counts both).
    var dropped: UInt64
    /// Of ``dropped``, those of the far end's capture (the censor's dev0; failclosed only).
    var farEndDropped: UInt64? = nil
    /// failclosed's verdict (tcpdump has none).
    var verdict: String?
    var reasons: [String]
    /// CPU seconds the capture's own threads ran during the probe (failclosed only; from
    /// /proc/self/task/TID/schedstat of the threads its open started).
    var captureCPUSeconds: Double? = nil
    /// CPU seconds the sending threads ran (the kernel's work for each packet included).
    var senderCPUSeconds: Double? = nil
  }

  struct Result: Codable {
    var payloadBytes: Int
    var wireBytes: Int
    var seconds: Double
    var bufferBytes: Int32
    /// How the load was sent (``FidelitySender/name``) and by how many threads.
    var sender: String
    var senderThreads: Int
    /// Where the load ends: "censor ingress" (nftables) or "sink socket" (a full buffer).
    var sinkDrop: String
    /// Packets/s of the sender flat out with no capture open: its own ceiling, beside the
    /// rate it reached with the capture on (``atSaturation``), which shares the cores.
    var senderCeiling: Double
    /// Packets per CPU-second the capture's threads took in the flat-out probe: how fast
    /// the capture would go with a core of its own (its ceiling, beside the sender's).
    var captureCeiling: Double?
    /// Achieved packets/s of the fastest probe with zero drops (nil: none had zero drops).
    var maxZeroDropRate: Double?
    /// True when even the sender's top speed caused no drop (the limit is the sender's).
    var senderBound: Bool
    var atDouble: Probe?
    var atSaturation: Probe
    var tcpdump: [Probe]
    /// Every failclosed probe in the order run.
    var probes: [Probe]
    /// Probes that dropped packets yet passed: must be zero.
    var passedWithDrops: Int
  }

  static let sink = SocketAddress("10.66.0.1:9000")!

  static func run(_ options: Options) throws -> Result {
    let sandbox = try SandboxRun.createBlocking()
    defer { sandbox.teardown() }
    // The sink never reads: a full receive buffer drops silently (no ICMP back to the device).
    let sinkSocket = try sandbox.censor.perform { try DatagramSocket.bound(to: sink) }
    defer { sinkSocket.close() }
    if options.dropAtIngress {
      // Only the load (UDP to the sink's port); the namespace's deletion removes the table.
      try CommandRunner.run(
        ["ip", "netns", "exec", sandbox.names.censor, "nft", "-f", "-"],
        stdin: """
          table netdev fcbench {
            chain load { type filter hook ingress device dev0 priority 0; udp dport \(sink.port) drop; }
          }
          """)
    }
    if options.sender == "udp" {
      var sockets: [DatagramSocket] = []
      defer { for socket in sockets { socket.close() } }
      for _ in 0..<options.threads {
        let socket = try sandbox.device.perform { try DatagramSocket(.ipv4) }
        sockets.append(socket)
        try socket.connect(to: sink)
      }
      let sender = PacedSender(
        sockets: sockets.map(\.descriptor.rawValue),
        message: [UInt8](repeating: 0x5A, count: options.payloadBytes), batch: options.batch)
      return try search(sandbox, sender, options)
    }
    let frame = try PacketRingSender.loadFrame(
      sandbox, sink: sink, payloadBytes: options.payloadBytes)
    if options.sender == "packet" {
      var sockets: [Int32] = []
      defer { for fd in sockets { close(fd) } }
      for _ in 0..<options.threads {
        sockets.append(
          try sandbox.device.perform {
            try PacketRingSender.packetSocket(
              interface: AddressPlan.deviceInterface, qdiscBypass: options.qdiscBypass)
          })
      }
      let sender = PacedSender(
        sockets: sockets, message: frame, batch: options.batch,
        name: "AF_PACKET sockets (sendmmsg)" + (options.qdiscBypass ? " (qdisc bypass)" : ""))
      return try search(sandbox, sender, options)
    }
    let rings = try PacketRingSender.open(
      sandbox, frame: frame, threads: options.threads, batch: options.batch,
      qdiscBypass: options.qdiscBypass)
    defer { rings.close() }
    return try search(sandbox, rings, options)
  }

  /// The sender's ceiling alone, then the search for the highest zero-drop rate with the
  /// capture on, then tcpdump at the rates that matter.
  static func search(_ sandbox: SandboxRun, _ sender: any FidelitySender, _ options: Options)
    throws -> Result
  {
    let alone = sender.send(rate: nil, seconds: options.seconds)
    let senderCeiling = Double(alone.sent) / max(alone.seconds, 1e-9)
    FileHandle.standardError.write(
      Data(
        "fcbench fidelity: \(sender.name) alone (no capture) sent \(Int(senderCeiling))/s\n".utf8))

    var probes: [Probe] = []
    func ours(_ rate: Double?) throws -> Probe {
      let probe = try captureProbe(sandbox, sender, rate: rate, options)
      probes.append(probe)
      FileHandle.standardError.write(Data("fcbench fidelity: \(line(probe))\n".utf8))
      return probe
    }

    let saturation = try ours(nil)
    let ceiling = saturation.sentRate
    var best: Probe?
    var bestRate = 0.0
    var atDouble: Probe?
    if saturation.dropped == 0 {
      best = saturation
      bestRate = ceiling
    } else {
      // Doubling from a sixteenth of the sender's top speed, then bisection.
      var rate = max(1000, (ceiling / 16).rounded(.down))
      var failing = ceiling
      while rate < ceiling * 0.9 {
        let probe = try ours(rate)
        if probe.dropped > 0 {
          failing = rate
          break
        }
        best = probe
        bestRate = rate
        rate *= 2
      }
      for _ in 0..<options.bisectionSteps {
        let middle = ((bestRate + failing) / 2).rounded()
        let probe = try ours(middle)
        if probe.dropped == 0 {
          best = probe
          bestRate = middle
        } else {
          failing = middle
        }
      }
      if best != nil {
        atDouble = 2 * bestRate < ceiling * 0.95 ? try ours(2 * bestRate) : saturation
      }
    }

    // tcpdump at the same rates: the highest zero-drop one, twice it, and flat out.
    var rates: [Double?] = []
    if saturation.dropped > 0 {
      if best != nil { rates.append(bestRate) }
      if let rate = atDouble?.targetRate { rates.append(rate) }
    }
    rates.append(nil)
    var peer: [Probe] = []
    for rate in rates {
      let probe = try tcpdumpProbe(sandbox, sender, rate: rate, options)
      FileHandle.standardError.write(Data("fcbench fidelity: \(line(probe))\n".utf8))
      peer.append(probe)
    }
    return Result(
      payloadBytes: options.payloadBytes, wireBytes: options.payloadBytes + 8 + 20 + 14,
      seconds: options.seconds, bufferBytes: options.bufferBytes, sender: sender.name,
      senderThreads: sender.threads,
      sinkDrop: options.dropAtIngress ? "censor ingress" : "sink socket",
      senderCeiling: senderCeiling.rounded(),
      captureCeiling: saturation.captureCPUSeconds.flatMap {
        $0 > 0 ? (Double(saturation.received) / $0).rounded() : nil
      },
      maxZeroDropRate: best?.sentRate, senderBound: saturation.dropped == 0, atDouble: atDouble,
      atSaturation: saturation, tcpdump: peer, probes: probes,
      passedWithDrops: probes.filter { $0.dropped > 0 && $0.verdict == "pass" }.count)
  }

  static func line(_ probe: Probe) -> String {
    let target = probe.targetRate.map { String(Int($0)) } ?? "max"
    let cpu = probe.captureCPUSeconds.map { String(format: " (capture CPU %.3f s)", $0) } ?? ""
    return "\(probe.tool) target \(target)/s sent \(Int(probe.sentRate))/s received "
      + "\(probe.received) dropped \(probe.dropped) \(probe.verdict ?? "")\(cpu)"
  }

  /// failclosed's capture (as `exec` opens it, positive control included) around one send.
  static func captureProbe(
    _ sandbox: SandboxRun, _ sender: any FidelitySender, rate: Double?, _ options: Options
  ) throws -> Probe {
    let before = threadIDs()
    let capture = try sandbox.openDeviceCapture(
      allowed: [(Endpoint(sink), .udp)], pcapPath: nil, bufferSize: options.bufferBytes)
    let captureThreads = threadIDs().subtracting(before)
    let outcome = sender.send(rate: rate, seconds: options.seconds)
    // Let the capture thread catch up with what is already in the ring.
    usleep(300_000)
    let cpu = captureThreads.compactMap(cpuSeconds).reduce(0, +)
    // Both ends' reports apart, then merged as DeviceLinkCapture.stop merges them: the merged
    // report's counts are the device's alone, and a probe that dropped only at the far end
    // (inconclusive) must not count as a zero-drop rate.
    let deviceReport = capture.device.stop()
    let wireReport = capture.wire.stop()
    let report = DeviceLinkCapture.merge(device: deviceReport, wire: wireReport)
    let farEndDropped = wireReport.capture?.dropped ?? 0
    return Probe(
      tool: "failclosed", targetRate: rate, sent: outcome.sent, sendFailures: outcome.failed,
      seconds: outcome.seconds, sentRate: Double(outcome.sent) / outcome.seconds,
      received: report.capture?.received ?? 0,
      dropped: (deviceReport.capture?.dropped ?? 0) + farEndDropped,
      farEndDropped: farEndDropped,
      verdict: report.verdict.rawValue, reasons: report.reasons.map(\.description),
      captureCPUSeconds: cpu, senderCPUSeconds: outcome.cpuSeconds)
  }

  /// The process's threads now.
  static func threadIDs() -> Set<String> {
    Set((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [])
  }

  /// A thread's time on a CPU so far (schedstat's first field, in nanoseconds).
  static func cpuSeconds(_ thread: String) -> Double? {
    guard
      let text = try? String(
        contentsOfFile: "/proc/self/task/\(thread)/schedstat", encoding: .utf8),
      let nanoseconds = Double(text.split(separator: " ").first ?? "")
    else { return nil }
    return nanoseconds / 1e9
  }

  /// tcpdump in the device namespace on the same interface, same snaplen, immediate mode and
  /// buffer size, writing to /dev/null; its "dropped by kernel" line after SIGINT.
  static func tcpdumpProbe(
    _ sandbox: SandboxRun, _ sender: any FidelitySender, rate: Double?, _ options: Options
  ) throws -> Probe {
    let log = FileManager.default.temporaryDirectory.appendingPathComponent(
      "fcbench-tcpdump-\(getpid()).txt")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: log) }
    let actions = FileActions()
    actions.open("/dev/null", to: 1, flags: O_WRONLY)
    actions.open(log.path, to: 2, flags: O_WRONLY)
    // On any early exit the sandbox's teardown kills what is left in its namespaces.
    let pid = try Spawner.spawn(
      [
        "ip", "netns", "exec", sandbox.names.device, "tcpdump", "-i",
        AddressPlan.deviceInterface, "-n", "-s", "2048", "--immediate-mode", "-B",
        String(options.bufferBytes / 1024), "-w", "/dev/null",
      ], actions: actions)
    var exited = false
    func isRunning() -> Bool {
      if !exited, Spawner.poll(pid) != nil { exited = true }
      return !exited
    }
    func text() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
    var listening = false
    for _ in 0..<500 where isRunning() {
      if text().contains("listening on") {
        listening = true
        break
      }
      usleep(10_000)
    }
    guard listening else {
      kill(pid, SIGTERM)
      if isRunning() { _ = Spawner.wait(pid) }
      throw SystemError("tcpdump did not start: \(text())", code: EIO)
    }
    let outcome = sender.send(rate: rate, seconds: options.seconds)
    usleep(300_000)
    kill(pid, SIGINT)
    for _ in 0..<500 where isRunning() { usleep(10_000) }
    if isRunning() {
      kill(pid, SIGKILL)
      _ = Spawner.wait(pid)
      throw SystemError("tcpdump ignored SIGINT", code: EIO)
    }
    func count(_ suffix: String) -> UInt64 {
      for line in text().split(separator: "\n") where line.hasSuffix(suffix) {
        return UInt64(line.split(separator: " ").first ?? "") ?? 0
      }
      return 0
    }
    return Probe(
      tool: "tcpdump", targetRate: rate, sent: outcome.sent, sendFailures: outcome.failed,
      seconds: outcome.seconds, sentRate: Double(outcome.sent) / outcome.seconds,
      received: count("packets received by filter"), dropped: count("packets dropped by kernel"),
      verdict: nil, reasons: [])
  }
}

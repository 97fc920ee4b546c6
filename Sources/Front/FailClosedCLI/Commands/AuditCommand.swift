import Audit
import Capture
import FailClosedSupport
import Foundation

/// `failclosed audit FILE.pcap --allow [ROLE:]HOST:PORT ...`: judges an existing capture.
public struct AuditCommand: Command {
  public init() {}
  public let name = "audit"
  public let summary = "judge an existing pcap file against a deny-by-default policy"
  public let usage = """
    Usage: failclosed audit FILE.pcap [--allow [ROLE:]HOST:PORT ...] [--sync-probe HOST:PORT]
                            [--device ADDRESS ...] [--device-mac MAC ...] [--report DIR] [--json]

    Reads FILE.pcap (pcap or pcapng; Ethernet, Linux cooked SLL/SLL2, raw IP or NULL/LOOP
    link types) and judges every packet by the way it went. The direction comes from the
    file: Linux cooked captures (SLL/SLL2, what `failclosed exec` writes) carry the kernel's
    outgoing/received mark; Ethernet frames are compared with --device-mac; otherwise the
    --device addresses decide. Deny by default: a packet leaving the device is allowed only
    if it goes to an --allow endpoint in the transport its role speaks (whatever source it
    claims: one leaving with an allowed endpoint as its source is a forged-source leak), or
    is an ICMP error sent towards the allowed endpoint whose packet it quotes. The role
    (ROLE:HOST:PORT; a bare HOST:PORT is an ORPort) also says what the device's bytes on the
    flow must be, followed from the SYN; a flow that fails is a leak of class
    clear-on-tor-endpoint, with its first bytes as evidence, and a flow whose start or bytes
    the file misses is inconclusive:
    \(Self.roleLines)
    Arriving packets are never leaks. Without any
    direction, a packet from an allowed endpoint cannot be told from a forged one: the
    verdict is then inconclusive, never pass. Everything else leaving is a leak, named by
    class, first match wins:
      dns             UDP or TCP to or from port 53, 853 (DNS over TLS), 5353 (mDNS), 5355 (LLMNR)
      multicast       a multicast or broadcast destination
      ipv6            any other IPv6 packet
      tcp, udp, icmp  by protocol
      other-protocol  other IP protocols, non-IP frames, undecodable frames
    and, from the content check alone, clear-on-tor-endpoint: bytes on a flow to an allowed
    endpoint that are not what its role speaks.
    ARP, IPv6 neighbour discovery, MLD and link-local IGMP are link control, never leaks, when
    well formed to the byte and link-scoped; otherwise they are leaks too. IP options
    (source routing, record route), IPv6 routing headers and overlapping fragments make a
    packet a leak even towards an allowed endpoint. Each leak names its reason, direction and
    evidence; DNS question names, TLS SNI and HTTP Host headers seen in leaks are printed.

    Verdict and exit code: pass (0), leak (5), inconclusive (2: the file is damaged or empty,
    packets' direction could not be told, or --sync-probe was given and no positive-control
    packet is in the file). A leak found before damage in the file is still a leak. Setup
    errors (unreadable file, bad option) exit 2. When --report cannot be written, the verdict
    is printed first, then the error: a leak still exits 5; a pass without its report exits 2.
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "allow", .repeated, valueName: "[ROLE:]HOST:PORT",
      help:
        "an allowed destination and what it is, e.g. 10.0.0.5:9001 (an ORPort), obfs4:[fd00::5]:443"
    ),
    OptionSpec(
      "sync-probe", .single, valueName: "HOST:PORT",
      help:
        "require the positive-control UDP packet to HOST:PORT (the harness's probe payload, 'failclosed-sync-probe ...')"
    ),
    OptionSpec(
      "device", .repeated, valueName: "ADDRESS",
      help: "the device's address: packets from it leave, packets to it arrive"),
    OptionSpec(
      "device-mac", .repeated, valueName: "MAC",
      help: "the device's MAC (aa:bb:cc:dd:ee:ff): Ethernet frames from it leave, others arrive"),
    OptionSpec(
      "report", .single, valueName: "DIR", help: "write DIR/audit.json (created if missing)",
      values: .directory),
    OptionSpec("json", .flag, help: "print the JSON report instead of the summary"),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.count == 1, let path = arguments.positional.first else {
      throw UsageError(
        arguments.positional.isEmpty
          ? "missing FILE.pcap" : "expected one FILE.pcap, got \(arguments.positional.count)")
    }
    var policy = AuditPolicy()
    for text in arguments.all("allow") {
      guard let (endpoint, role) = AllowedEndpoints.parse(text) else {
        throw UsageError(
          "--allow: expected [ROLE:]HOST:PORT (e.g. 10.0.0.5:9001, obfs4:[fd00::5]:443; roles "
            + "\(EndpointRole.allCases.map(\.rawValue).joined(separator: ", "))), got '\(text)'")
      }
      policy.allowed.insert(endpoint, as: role)
    }
    if let text = arguments.value("sync-probe") {
      guard let endpoint = Endpoint(text) else {
        throw UsageError("--sync-probe: expected HOST:PORT, got '\(text)'")
      }
      policy.syncProbe = SyncProbe(destination: endpoint, payload: nil)
    }
    for text in arguments.all("device") {
      guard let address = IPAddress(text) else {
        throw UsageError("--device: expected an IPv4 or IPv6 address, got '\(text)'")
      }
      policy.deviceAddresses.insert(address)
    }
    for text in arguments.all("device-mac") {
      let parts = text.split(separator: ":", omittingEmptySubsequences: false)
      let octets = parts.compactMap { $0.count == 2 ? UInt8($0, radix: 16) : nil }
      guard parts.count == 6, octets.count == 6 else {
        throw UsageError("--device-mac: expected a MAC such as 02:00:00:00:00:01, got '\(text)'")
      }
      policy.deviceLinkAddresses.append(octets.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }
    let report: AuditReport
    let finalPolicy = policy
    do {
      report = try await BlockingIO.run("failclosed.audit") {
        try PcapFileReader.audit(path: path, policy: finalPolicy)
      }
    } catch let error as CaptureError {
      FailClosedMain.printError("failclosed audit: \(error.message)")
      return ExitCode.inconclusive
    }
    // The verdict first: a report that cannot be written must not hide a leak.
    if arguments.has("json") {
      print(String(decoding: try report.jsonData(), as: UTF8.self))
    } else {
      print(AuditSummary.text(report, source: path))
    }
    if let directory = arguments.value("report") {
      do {
        try AtomicFile.createDirectories(directory)
        try AtomicFile.write(report.jsonData(), to: directory + "/audit.json")
      } catch {
        FailClosedMain.printError("failclosed audit: --report \(directory): \(error)")
        return ExitCode.afterReportFailure(report.verdict.exitCode)
      }
    }
    return report.verdict.exitCode
  }
}

extension AuditCommand {
  /// One line per endpoint role, from the roles themselves: `--help` of audit and exec.
  static var roleLines: String {
    EndpointRole.allCases.map { role in
      "  " + role.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0) + role.allows
    }.joined(separator: "\n")
  }
}

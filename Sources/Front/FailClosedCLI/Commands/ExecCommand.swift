import Audit
import FailClosedSupport
import Foundation
import Lanes
import Sandbox
import Testnet

/// `failclosed exec [--allow [ROLE:]HOST:PORT ...] [--allow-from-consensus FILE ...] [--tor mock|real]
/// [--no-tor] [--report DIR] [--grace S] -- CMD ARGS...`
public struct ExecCommand: Command {
  public init() {}
  public let name = "exec"
  public let summary = "run any program in the sandbox and audit every packet it sends"
  public let usage = """
    Usage: failclosed exec [--allow [ROLE:]HOST:PORT ...] [--allow-from-consensus FILE ...]
                           [--tor mock|real | --no-tor] [--report DIR] [--grace SECONDS]
                           [--timeout SECONDS] -- CMD ARGS...

    Builds a fresh sandbox (device, censor and world network namespaces), opens a capture on
    the device's link, proves it with a positive-control packet, starts the mock Tor on
    127.0.0.1:39050 inside the device (unless --no-tor), runs CMD there, waits for its whole
    process tree (daemonised children included) and a grace period, then judges every packet
    the device sent. Allowed: the fake Tor network's guards (\(AddressPlan.guards.map(\.description).joined(separator: ", "))), --allow,
    and every relay's ORPort and DirPort in each --allow-from-consensus file (a cached
    consensus or microdesc consensus, for a program that brings its own Tor setup).
    Each allowed endpoint has a role, which decides the one transport a packet to it may use
    and what the device's bytes on it must be (a flow that fails is a clear-on-tor-endpoint
    leak; one whose start the capture missed is inconclusive):
    \(AuditCommand.roleLines)
    The device resolves names through the world's resolver (\(AddressPlan.resolverV4)), so a
    program that resolves locally sends a real DNS packet, and leaks.

    --tor real: instead of the mock, a private Tor network of Debian's tor (three authorities,
    exit, middle, obfs4 bridge) starts in the world, and Debian's tor runs in the device as
    its client only (SOCKS 127.0.0.1:39050, control port 127.0.0.1:39051, cookie in
    DIR/tor/client with --report DIR); the command starts once it has bootstrapped. Allowed:
    the network's relays from its consensus and its bridge. The exit resolves every name to
    the world's web host (\(AddressPlan.webHostV4)), which answers HTTP and HTTPS.

    Exit codes: 0 pass, 5 leak, 2 inconclusive or setup error.
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "allow", .repeated, valueName: "[ROLE:]HOST:PORT",
      help: "a further allowed destination (ROLE orport, the default, dirport, obfs4, tcp, udp...)"),
    OptionSpec(
      "allow-from-consensus", .repeated, valueName: "FILE",
      help: "allow every relay's ORPort and DirPort in this consensus", values: .file),
    OptionSpec(
      "tor", .single, valueName: "mock|real",
      help: "the device's Tor: the mock (default) or Debian's tor on a private network",
      values: .words(["mock", "real"])),
    OptionSpec("no-tor", .flag, help: "start no Tor at all"),
    OptionSpec(
      "report", .single, valueName: "DIR",
      help: "write DIR/report.json, DIR/capture.pcap and DIR/capture-wire.pcap", values: .directory),
    OptionSpec(
      "grace", .single, valueName: "SECONDS",
      help: "keep capturing this long after the process tree ends (default 3, at most 86400)"),
    OptionSpec(
      "timeout", .single, valueName: "SECONDS",
      help: "kill the process tree after this long (default 120, at most 86400)"),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard !arguments.trailing.isEmpty else {
      throw UsageError("missing the command: failclosed exec [options] -- CMD ARGS...")
    }
    if let stray = arguments.positional.first {
      throw UsageError("unexpected '\(stray)' before '--' (the command goes after '--')")
    }
    var allow = AllowedEndpoints()
    for file in arguments.all("allow-from-consensus") {
      for (endpoint, role) in try Self.consensusEndpoints(file) { allow.insert(endpoint, as: role) }
    }
    for text in arguments.all("allow") {
      guard let (endpoint, role) = AllowedEndpoints.parse(text) else {
        throw UsageError(
          "--allow: expected [ROLE:]HOST:PORT (e.g. 10.66.1.80:9001, obfs4:10.66.1.5:4433; "
            + "roles \(EndpointRole.allCases.map(\.rawValue).joined(separator: ", "))), got '\(text)'"
        )
      }
      allow.insert(endpoint, as: role)
    }
    let tor = arguments.value("tor") ?? "mock"
    guard tor == "mock" || tor == "real" else {
      throw UsageError("--tor: expected mock or real, got '\(tor)'")
    }
    if tor == "real" && arguments.has("no-tor") {
      throw UsageError("--tor real and --no-tor contradict each other")
    }
    let options = SandboxExec.Options(
      command: arguments.trailing, allow: allow, tor: !arguments.has("no-tor"),
      grace: try arguments.seconds("grace") ?? 3, timeout: try arguments.seconds("timeout") ?? 120,
      reportDirectory: arguments.value("report"))
    let result: SandboxExec.Result
    var realTor: ExecRealTor?
    if tor == "real" {
      let directory =
        arguments.value("report").map { $0 + "/tor" }
        ?? NSTemporaryDirectory() + "failclosed-exec-tor-\(getpid())"
      realTor = ExecRealTor(directory: directory)
    }
    defer {
      if let realTor, arguments.value("report") == nil {
        try? FileManager.default.removeItem(atPath: realTor.directory)
      }
    }
    do {
      if let realTor {
        print("failclosed exec: starting a private Tor network and Debian's tor in the device ...")
        result = try await SandboxExec.run(
          options, torStarter: realTor.torStarter(), prepare: realTor.prepare)
      } else {
        result = try await SandboxExec.run(options)
      }
    } catch {
      FailClosedMain.printError("failclosed exec: setup error: \(error)")
      return ExitCode.inconclusive
    }
    print(AuditSummary.text(result.report, source: result.pcapPath))
    let status = result.commandStatus.map { "exit \($0)" } ?? "killed at the timeout"
    print(
      "  command: \(result.command.joined(separator: " ")) (\(status)); sandbox \(result.prefix): "
        + "set-up \(Int(result.setupMilliseconds)) ms, teardown \(Int(result.teardownMilliseconds)) ms"
    )
    if let realTor {
      print(
        "  tor: network ready in \(String(format: "%.1f", realTor.networkReadySeconds)) s, "
          + "bootstrapped in \(String(format: "%.1f", realTor.bootstrapSeconds)) s")
    }
    if let reportError = result.reportError {
      FailClosedMain.printError("failclosed exec: --report: \(reportError)")
      return ExitCode.afterReportFailure(result.report.verdict.exitCode)
    }
    return result.report.verdict.exitCode
  }

  /// Every ORPort and DirPort in a cached consensus (either flavour), as allowed endpoints
  /// with their roles.
  /// A file that cannot be read, a malformed router line, or a file with no router is an
  /// error naming the file (and the line).
  public static func consensusEndpoints(_ file: String) throws -> [(Endpoint, EndpointRole)] {
    let text: String
    do {
      text = try String(contentsOfFile: file, encoding: .utf8)
    } catch {
      throw UsageError(
        "--allow-from-consensus: cannot read '\(file)': \(error.localizedDescription)")
    }
    let consensus: Consensus
    do {
      consensus = try Consensus(text: text)
    } catch TestnetError.malformedConsensus(let line, let content) {
      throw UsageError(
        "--allow-from-consensus: \(file) line \(line): not a router line: '\(content.prefix(120))'")
    }
    guard !consensus.routers.isEmpty else {
      throw UsageError(
        "--allow-from-consensus: \(file) lists no relay (no 'r' line): not a consensus")
    }
    var endpoints: [(Endpoint, EndpointRole)] = []
    for point in consensus.contactPoints {
      guard let endpoint = Endpoint(point.endpoint) else {
        throw UsageError(
          "--allow-from-consensus: \(file): '\(point.endpoint)' is not an address and port")
      }
      endpoints.append((endpoint, EndpointRole(point.kind)))
    }
    return endpoints
  }
}

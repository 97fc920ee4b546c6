import FailClosedSupport
import Foundation
import MockTor
import Sandbox
import TorControl

/// `failclosed mock-tor`: the mock Tor on its own, until SIGINT or SIGTERM.
public struct MockTorCommand: Command {
  public init() {}

  public let name = "mock-tor"
  public let summary = "run the mock Tor (SOCKS listener, bootstrap plan, faults)"
  public let usage = """
    Usage: failclosed mock-tor [--personality arti|ctor] [--listen HOST:PORT] [options]

    Runs a mock Tor client on this machine until SIGINT or SIGTERM. Streams go to the
    destinations given with --map (hostname or .onion to an address on this machine); raw
    loopback IPs are reachable as is; everything else fails the way the personality's Tor
    fails. Every SOCKS request is logged with the destination exactly as the client sent it
    (a raw IP there means the client resolved the name itself: a DNS leak upstream).
    With --epoch (the scenario runner's), plan time 0 and the log's times are that instant on
    the run's clock (--time-scale), shared with the app. With --epoch stdin the runner hands it
    over: standard input is its socket; the mock writes "ready" on it once its options are
    read, reads the epoch's line, and writes "started SECONDS" once it listens. With
    --clock-page (the runner's) the run's clock jumps idle time, as the app's does.

    Personalities:
      ctor  C tor as Onion Browser drives it: SOCKS listens from the start; SOCKS4/4a/5,
            username/password (stream isolation, <torS0X> usernames), RESOLVE and
            RESOLVE_PTR; streams wait for the bootstrap, then fail with 0x06.
      arti  bitchat's in-process Arti: SOCKS binds only once bootstrapped; SOCKS5 no-auth
            only (else 0xFF), CONNECT only (else 0x01), failed connects get 0x05.

    Faults (--fault HOST=SPEC, SPEC is comma-separated toxics, toxiproxy's vocabulary):
    \(StreamToxics.usage.map { "  " + $0 }.joined(separator: "\n"))
      e.g. --fault web.test=latency=200,bandwidth=64  --fault x.onion=reply=0xf2

    Examples:
      failclosed mock-tor --map web.test=127.0.0.1:8080 --event-log /tmp/mock.jsonl
      failclosed mock-tor --personality arti --bootstrap-plan healthy:10 --time-scale 10
    """

  public var options: [OptionSpec] {
    [
      OptionSpec(
        "personality", .single, valueName: "arti|ctor", help: "which Tor to imitate (default ctor)",
        values: .words(["arti", "ctor"])),
      OptionSpec(
        "listen", .single, valueName: "HOST:PORT", help: "SOCKS address (default 127.0.0.1:39050)"),
      OptionSpec("force-non-loopback", .flag, help: "allow --listen on a non-loopback address"),
      OptionSpec(
        "bootstrap-plan", .single, valueName: "PLAN",
        help: "healthy[:SECONDS] (default healthy:5), stall:TAG[:timeout|refused][:UNTIL], never, "
          + "flap:SECONDS, crash:SECONDS"),
      OptionSpec(
        "map", .repeated, valueName: "HOST=IP:PORT", help: "route HOST to a local address"),
      OptionSpec(
        "fault", .repeated, valueName: "HOST=SPEC", help: "fault streams to HOST (see above)"),
      OptionSpec(
        "event-log", .single, valueName: "FILE",
        help: "write JSON-lines events to FILE (moved to FILE.1 when it reaches 16 MiB)",
        values: .file),
      OptionSpec(
        "time-scale", .single, valueName: "N",
        help: "run the mock's clock N times faster than real time (default 1)"),
      RunClockOption.spec,
      RunClockOption.pageSpec,
      OptionSpec(
        "handshake-timeout", .single, valueName: "SECONDS",
        help: "close connections that do not finish the SOCKS handshake in time (default 30)"),
      OptionSpec(
        "guard", .repeated, valueName: "IP:PORT",
        help: "tunnel every stream to this fake-Tor guard (the sandbox's world)"),
      OptionSpec(
        "control-port", .single, valueName: "PORT",
        help: "ctor: serve a Tor control port on 127.0.0.1:PORT"),
      OptionSpec(
        "control-auth", .single, valueName: "none|password:SECRET|cookie:FILE",
        help: "control port authentication (default none; cookie:FILE writes a 32-byte cookie)"),
      OptionSpec(
        "control-disable-network", .flag,
        help: "start as a tor configured with DisableNetwork 1: the bootstrap plan begins when "
          + "a controller sets DisableNetwork=0"),
    ]
  }

  /// Builds the configuration from parsed arguments; every error names the option at fault.
  /// `handedEpoch`: the epoch received with `--epoch stdin` (``EpochReceiver``).
  public static func configuration(
    from arguments: ParsedArguments, handedEpoch: MonotonicInstant? = nil
  ) throws -> MockTorConfiguration {
    var configuration = MockTorConfiguration()
    if let text = arguments.value("personality") {
      guard let personality = MockTorPersonality(rawValue: text.lowercased()) else {
        throw UsageError("--personality: expected arti or ctor, got '\(text)'")
      }
      configuration.personality = personality
    }
    if let text = arguments.value("listen") {
      guard let address = SocketAddress(text) else {
        throw UsageError(
          "--listen: expected HOST:PORT like 127.0.0.1:39050 or [::1]:39050, got '\(text)'")
      }
      configuration.socksAddress = address
    }
    configuration.allowNonLoopback = arguments.has("force-non-loopback")
    if !configuration.socksAddress.isLoopback && !configuration.allowNonLoopback {
      throw UsageError(
        "--listen: \(configuration.socksAddress) is not a loopback address; add --force-non-loopback "
          + "to expose the mock beyond this machine")
    }
    if let text = arguments.value("bootstrap-plan") {
      do { configuration.bootstrapPlan = try BootstrapPlan(parsing: text) } catch {
        throw UsageError("--bootstrap-plan: \(error)")
      }
    }
    for spec in arguments.all("map") {
      do { try configuration.destinations.add(parsing: spec) } catch {
        throw UsageError("--map: \(error)")
      }
    }
    for spec in arguments.all("fault") {
      guard let equals = spec.firstIndex(of: "="), equals != spec.startIndex else {
        throw UsageError("--fault: expected HOST=SPEC, got '\(spec)'")
      }
      let host = String(spec[..<equals])
      do {
        configuration.faults[host] = try StreamToxics(
          parsing: String(spec[spec.index(after: equals)...]))
      } catch {
        throw UsageError("--fault: \(error)")
      }
    }
    let guards = try arguments.all("guard").map { text in
      guard let address = SocketAddress(text) else {
        throw UsageError("--guard: expected IP:PORT, got '\(text)'")
      }
      return address
    }
    if !guards.isEmpty {
      // The process already runs where the guard is reachable (the device namespace).
      configuration.upstream = GuardUpstream(
        client: GuardTunnelClient(device: nil, guards: guards))
    }
    configuration.eventLogPath = arguments.value("event-log")
    let epoch = try handedEpoch ?? RunClockOption.epoch(arguments)
    if let text = arguments.value("time-scale") {
      let factor = try ParsedArguments.number(text, option: "time-scale", in: 0.001...1000)
      configuration.clock = ScaledClock(factor: factor, epoch: epoch ?? .now)
      // The page once the epoch is known (with --epoch stdin this runs again after it).
      if let path = arguments.value("clock-page"),
        epoch != nil || !RunClockOption.isHandedOver(arguments)
      {
        configuration.clock = try EventClock(
          factor: factor, epoch: epoch ?? .now, page: ClockPage.open(at: path),
          order: ClockPage.Order.torSide)
        // ctor: the control port's bootstrap driver and its streams' waits poll in real time
        // where the clock cannot see them: hold for the whole run (a plain scaled clock).
        if configuration.personality == .ctor { RunClockHold.beginForTheRun() }
      }
    } else if arguments.value("clock-page") != nil {
      throw UsageError("--clock-page: needs --time-scale")
    } else if let epoch {
      configuration.clock = ScaledClock(factor: 1, epoch: epoch)
    }
    // The run's epoch is plan time 0: the mock's times are the app's and the runner's.
    if epoch != nil { configuration.planOrigin = 0 }
    if let seconds = try arguments.seconds("handshake-timeout") {
      guard seconds > 0 else {
        throw UsageError("--handshake-timeout: expected seconds > 0, got 0")
      }
      configuration.handshakeTimeout = seconds
    }
    if let port = try arguments.integer("control-port", in: 1...65535) {
      guard configuration.personality == .ctor else {
        throw UsageError("--control-port: the arti personality has no control port")
      }
      configuration.controlPort = UInt16(port)
    } else if arguments.value("control-auth") != nil {
      throw UsageError("--control-auth: needs --control-port")
    } else if arguments.has("control-disable-network") {
      throw UsageError("--control-disable-network: needs --control-port")
    }
    return configuration
  }

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.isEmpty else {
      throw UsageError("unexpected argument '\(arguments.positional[0])'")
    }
    // Started by the harness: end with it, so a crashed run or test leaves no mock behind.
    ParentDeathWatch.start()
    var configuration = try Self.configuration(from: arguments)
    // --epoch stdin: set up as far as the options, then take the run's epoch; "started" once
    // the listeners are up, so the runner knows its lead was long enough.
    var handedEpoch: MonotonicInstant?
    if RunClockOption.isHandedOver(arguments) {
      let epoch = try await BlockingIO.run("mock-tor.epoch") { try EpochReceiver.receive() }
      configuration = try Self.configuration(from: arguments, handedEpoch: epoch)
      handedEpoch = epoch
    }
    let mock = try MockTor(configuration)
    try mock.start()
    let control: ControlPortService?
    do { control = try Self.startControlPort(arguments, configuration, mock) } catch {
      mock.stop()
      throw error
    }
    defer { control?.stop() }
    if let control { print("mock-tor: control port on \(control.address)") }
    let listening =
      configuration.personality == .ctor
      ? "SOCKS on \(mock.socksAddress?.description ?? "?")"
      : "SOCKS on \(configuration.socksAddress) once bootstrapped"
    print("mock-tor (\(configuration.personality.rawValue)): \(listening); Ctrl-C to stop")
    // Now, not at exit: stdout to a file is block-buffered, and the scenario runner waits for
    // the "control port on" line before it starts the app (10 s per ctor scenario otherwise).
    fflush(nil)
    if let handedEpoch { EpochReceiver.reportStarted(epoch: handedEpoch) }
    let signal = await SignalWaiter.waitForTermination()
    mock.stop()
    print("mock-tor: stopped on \(signal)")
    return ExitCode.pass
  }

  /// The ctor control port, when --control-port is given: bootstrap steps and commands go to the
  /// mock's event log ("control_bootstrap", "control"); SIGNAL SHUTDOWN (HALT, TERM, INT) ends
  /// the process the way Ctrl-C does.
  static func startControlPort(
    _ arguments: ParsedArguments, _ configuration: MockTorConfiguration, _ mock: MockTor
  ) throws -> ControlPortService? {
    guard let port = configuration.controlPort else { return nil }
    let eventLog = mock.eventLog
    let service: ControlPortService
    do {
      service = try ControlPortService(
        port: port, auth: arguments.value("control-auth") ?? "none",
        plan: arguments.value("bootstrap-plan") ?? configuration.bootstrapPlan.description,
        clock: configuration.clock,
        socksListeners: mock.socksAddress.map { [$0.description] } ?? [],
        disableNetwork: arguments.has("control-disable-network"),
        log: { event, time, fields in
          eventLog.record(event, time: time, fields.mapValues { .string($0) })
        },
        onSignal: { name in
          if BootstrapDriver.exitSignals.contains(name) { kill(getpid(), SIGTERM) }
        }, origin: configuration.planOrigin)
    } catch let error as ControlPortServiceError {
      throw UsageError(error.description)
    }
    service.start()
    return service
  }
}

/// Waits for SIGINT or SIGTERM with dispatch sources (the default handlers are ignored so the
/// process can shut the mock down cleanly).
enum SignalWaiter {
  static func waitForTermination() async -> String {
    await withCheckedContinuation { continuation in
      let queue = DispatchQueue(label: "failclosed.signals")
      let box = SignalSources()
      for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler {
          if box.fire() {
            box.cancelAll()
            continuation.resume(returning: name)
          }
        }
        box.add(source)
        source.resume()
      }
    }
  }
}

/// The signal sources and a once-only flag, touched only on the signal queue.
private final class SignalSources: @unchecked Sendable {
  private var sources: [any DispatchSourceSignal] = []
  private var fired = false
  func add(_ source: any DispatchSourceSignal) { sources.append(source) }
  func fire() -> Bool {
    defer { fired = true }
    return !fired
  }
  func cancelAll() {
    for source in sources { source.cancel() }
    sources = []
  }
}

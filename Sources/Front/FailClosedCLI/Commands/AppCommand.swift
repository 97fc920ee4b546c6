import BitchatSource
import FailClosedSupport
import Foundation
import SystemUnderTest
import Vocabulary

/// `failclosed app`: runs the model of bitchat's Tor layer through timed actions and prints
/// every event as a JSON line on stdout (docs/app-driver.md).
public struct AppCommand: Command {
  public init() {}
  public let name = "app"
  public let summary =
    "run the modelled app (bitchat's Tor layer, or Onion Browser's) through timed actions"
  public let usage = """
    Usage: failclosed app --actions FILE|- [--profile PROFILE]
                          [--backend arti|mock|ctor|tor|simulated] [--time-scale N]
                          [--epoch NANOSECONDS|stdin] [--clock-page PATH]
                          [--state-dir DIR] [--socks HOST:PORT] [--directory-url URL]
                          [--relay URL]... [--torrc-base FILE] [--tor-binary PATH]
                          [--bridge LINE]...
           failclosed app --bitchat-src DIR --actions FILE|- [--backend arti|tor]
                          [--state-dir DIR] [--socks HOST:PORT] [--ca FILE]
                          [--torrc-base FILE] [--transport apple|linux-foundation]

    Actions: \(ActionVerbs.actionsFileNames().joined(separator: ", ")).
    Reads timed actions (JSON lines or a JSON array; see docs/app-driver.md) and prints each
    state change, notification, socket opened and request as a JSON line with its virtual time.
    With --epoch (the scenario runner's), time 0 is that instant on the run's clock, shared
    with the mock Tor: the app sets up before it (events then have negative times) and
    performs its actions from it. With --epoch stdin the runner hands it over once the app has
    set up: standard input is the runner's socket, the app writes "ready" on it, reads the
    epoch's line, and writes "started SECONDS" (past the epoch) when its objects are built.
    With --clock-page (the runner's) the run's clock jumps idle time: virtual time runs at
    --time-scale while anything works and skips to the next deadline when all is idle.

    Profiles: bitchat (default), hardened, naive-port; onion-browser-1, onion-browser-2,
    onion-browser-3 (Onion Browser 1.X, 2.X, 3.X, each rule for rule; --backend ctor or tor);
    onion-browser is onion-browser-3, the current release.

    --backend tor starts Debian's tor itself, in the namespace the app runs in (run it in the
    harness's device namespace; in the host's, every address tor is given must be loopback):
    <state-dir>/tor/torrc is --torrc-base (the network's settings: DirAuthority lines...) plus
    the app's own options, SOCKS at --socks, control port at --control (127.0.0.1:39051, cookie
    authentication). Bridges come from preferences.json key tor.bridges (an array of bridge
    lines), which --bridge LINE (repeatable) replaces; the hardened profile uses them (a
    malformed line: tor is not started), bitchat ignores them (it has no bridge support).

    --bitchat-src DIR runs bitchat's own code instead of the model (the bitchat-source lane,
    docs/bitchat-source.md): the driver built from the bitchat checkout at DIR (cached) reads
    the same actions and prints the same events, in real time. --backend arti (default): its
    arti.h waits for a Tor's SOCKS port at --socks (the mock's); --backend tor: arti.h runs
    Debian's tor pinned by --torrc-base. --transport linux-foundation uses stock
    swift-corelibs URLSession (which ignores the SOCKS proxy: a canary).
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "actions", .single, valueName: "FILE|-", help: "the actions file, - for stdin", values: .file),
    OptionSpec(
      "profile", .single, valueName: "NAME",
      help: "bitchat (default), hardened, naive-port, onion-browser-1|2|3 or onion-browser"),
    OptionSpec(
      "backend", .single, valueName: "NAME",
      help:
        "arti (a running mock at --socks, default), mock (in process), ctor, tor or simulated"),
    OptionSpec(
      "control", .single, valueName: "HOST:PORT", help: "--backend ctor/tor: control port"),
    OptionSpec("control-password", .single, valueName: "P", help: "--backend ctor: password"),
    OptionSpec(
      "control-cookie", .single, valueName: "FILE", help: "--backend ctor: cookie file",
      values: .file),
    OptionSpec(
      "mock-map", .repeated, valueName: "HOST=IP:PORT",
      help: "--backend mock: where the mock sends streams for HOST"),
    OptionSpec("time-scale", .single, valueName: "N", help: "virtual seconds per real second"),
    RunClockOption.spec,
    RunClockOption.pageSpec,
    OptionSpec(
      "state-dir", .single, valueName: "DIR", help: "preferences and directory cache",
      values: .directory),
    OptionSpec("socks", .single, valueName: "HOST:PORT", help: "SOCKS endpoint (127.0.0.1:39050)"),
    OptionSpec("directory-url", .single, valueName: "URL", help: "the geo relay directory CSV"),
    OptionSpec("relay", .repeated, valueName: "URL", help: "replaces the four built-in relays"),
    OptionSpec(
      "ca", .single, valueName: "FILE", help: "PEM trust anchors for HTTPS/wss", values: .file),
    OptionSpec(
      "bootstrap-seconds", .single, valueName: "S",
      help: "simulated backend: bootstrap time, 'never' for a stall"),
    OptionSpec("seed", .single, valueName: "N", help: "jitter seed (default 1)"),
    OptionSpec(
      "torrc-base", .single, valueName: "FILE",
      help: "--backend tor: the network's client settings (DirAuthority lines...)", values: .file),
    OptionSpec(
      "tor-binary", .single, valueName: "PATH", help: "--backend tor: tor (default /usr/bin/tor)",
      values: .file),
    OptionSpec(
      "bridge", .repeated, valueName: "LINE",
      help: "sets preferences key tor.bridges (repeatable; used by the hardened profile)"),
    OptionSpec(
      "bitchat-src", .single, valueName: "DIR",
      help: "run bitchat's own code from this checkout instead of the model", values: .directory),
    OptionSpec(
      "transport", .single, valueName: "NAME",
      help: "--bitchat-src: apple (default) or linux-foundation",
      values: .words(BitchatSourceTransport.allCases.map(\.rawValue))),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard let actionsPath = arguments.value("actions") else {
      throw UsageError("--actions is required (a file, or - for stdin)")
    }
    if let checkout = arguments.value("bitchat-src") {
      return try runBitchatSource(arguments, checkout: checkout)
    }
    // The model started by the harness: end with it (bitchat's driver, exec'd above, is
    // its own process).
    ParentDeathWatch.start()
    if arguments.value("transport") != nil {
      throw UsageError("--transport needs --bitchat-src (the model has its own transports)")
    }
    var options = AppDriver.Options()
    if let profile = arguments.value("profile") {
      guard let value = AppDriver.Profile(rawValue: profile) else {
        throw UsageError(
          "--profile: expected one of "
            + AppDriver.Profile.allCases.map(\.rawValue).joined(separator: ", ")
            + ", got '\(profile)'")
      }
      options.profile = value
    }
    if let backend = arguments.value("backend") {
      guard let value = AppDriver.Backend(rawValue: backend) else {
        throw UsageError(
          "--backend: expected arti, mock, ctor, tor or simulated, got '\(backend)'")
      }
      options.backend = value
    }
    if let scale = arguments.value("time-scale") {
      options.timeScale = try ParsedArguments.number(scale, option: "time-scale", in: 0.001...1000)
    }
    options.epoch = try RunClockOption.epoch(arguments)
    options.receivesEpoch = RunClockOption.isHandedOver(arguments)
    options.clockPage = arguments.value("clock-page")
    if options.receivesEpoch && arguments.value("actions") == "-" {
      throw UsageError("--epoch stdin: standard input is the runner's socket, not --actions -")
    }
    options.stateDirectory = arguments.value("state-dir")
    if let socks = arguments.value("socks") {
      guard let address = SocketAddress(socks) else {
        throw UsageError("--socks: expected HOST:PORT with an IP address, got '\(socks)'")
      }
      options.socks = address
    }
    if let url = arguments.value("directory-url") { options.directoryURL = url }
    for relay in arguments.all("relay") {
      guard NostrRelayURL.normalized(relay) != nil else {
        throw UsageError("--relay: '\(relay)' is not a ws:// or wss:// URL")
      }
    }
    options.relays = arguments.all("relay")
    if let control = arguments.value("control") {
      guard let address = SocketAddress(control) else {
        throw UsageError("--control: expected HOST:PORT with an IP address, got '\(control)'")
      }
      options.control = address
    }
    if let password = arguments.value("control-password") {
      options.controlAuthentication = .password(password)
    } else if let cookie = arguments.value("control-cookie") {
      options.controlAuthentication = .cookieFile(cookie)
    }
    for spec in arguments.all("mock-map") {
      guard let equals = spec.firstIndex(of: "="),
        let address = SocketAddress(String(spec[spec.index(after: equals)...])), address.isLoopback
      else {
        throw UsageError("--mock-map: expected HOST=IP:PORT on 127.0.0.0/8 or ::1, got '\(spec)'")
      }
      options.mockDestinations[String(spec[..<equals])] = address
    }
    options.trustPEMPath = arguments.value("ca")
    if let text = arguments.value("bootstrap-seconds") {
      if text == "never" {
        options.bootstrapSeconds = nil
      } else {
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0,
          seconds <= ParsedArguments.maximumSeconds
        else {
          throw UsageError(
            "--bootstrap-seconds: expected seconds from 0 to 86400 or 'never', got '\(text)'")
        }
        options.bootstrapSeconds = seconds
      }
    }
    if let seed = arguments.value("seed") {
      guard let value = UInt64(seed) else { throw UsageError("--seed: expected an integer") }
      options.jitterSeed = value
    }
    let bridges = arguments.all("bridge")
    if !bridges.isEmpty {
      do {
        _ = try TorBridgeSettings.validate(bridges)
      } catch {
        throw UsageError("--bridge: \(error)")
      }
      options.bridges = bridges
    }
    if options.backend == .tor {
      options.tor = try torConfiguration(arguments, options: &options)
    } else if arguments.value("torrc-base") != nil || arguments.value("tor-binary") != nil {
      throw UsageError("--torrc-base and --tor-binary need --backend tor")
    }
    let text: String
    if actionsPath == "-" {
      text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    } else {
      guard let data = FileManager.default.contents(atPath: actionsPath) else {
        throw UsageError("--actions: cannot read '\(actionsPath)'")
      }
      text = String(decoding: data, as: UTF8.self)
    }
    let actions: [AppAction]
    do {
      actions = try AppAction.parseFile(text, name: actionsPath == "-" ? "stdin" : actionsPath)
    } catch let error as AppActionError {
      throw UsageError(error.description)
    }
    let output = LineWriter()
    do {
      try await AppDriver.run(actions: actions, options: options) { event in
        output.write(event.jsonLine)
      }
    } catch let error as AppActionError {
      throw UsageError(error.description)
    }
    return ExitCode.pass
  }

  /// --backend tor: the base torrc, binary and ports, checked now; tor's files go under
  /// --state-dir (a temporary directory without one).
  func torConfiguration(_ arguments: ParsedArguments, options: inout AppDriver.Options) throws
    -> DebianTorConfiguration
  {
    guard let base = arguments.value("torrc-base") else {
      throw UsageError("--backend tor needs --torrc-base FILE (the network's client settings)")
    }
    if options.stateDirectory == nil {
      options.stateDirectory = NSTemporaryDirectory() + "failclosed-app-\(getpid())"
    }
    do {
      return try DebianTorConfiguration(
        baseTorrcPath: base,
        torBinary: arguments.value("tor-binary") ?? DebianTorConfiguration.defaultTorBinary,
        stateDirectory: options.stateDirectory!, socks: options.socks,
        control: options.control ?? DebianTorConfiguration.defaultControl)
    } catch let error as DebianTorConfigurationError {
      throw UsageError(error.description)
    }
  }
}

/// Writes whole lines to stdout, one at a time, flushed (the scenario runner reads them live).
final class LineWriter: @unchecked Sendable {
  private let lock = NSLock()
  func write(_ line: String) {
    lock.withLock { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
  }
}

import BitchatSource
import FailClosedSupport
import Foundation

/// `failclosed app --bitchat-src DIR`: the same actions file, state directory and JSON event
/// lines, but bitchat's own code runs them: the driver built from the checkout at DIR (cached
/// by its files' hashes) replaces this process. Backends: `arti` (default: arti.h waits for a
/// mock Tor's SOCKS port at --socks) and `tor` (arti.h runs Debian's tor pinned by
/// --torrc-base). bitchat reads the wall clock, so only --time-scale 1 is possible.
extension AppCommand {
  /// Options of the model alone: bitchat's own code has its own relays, directory URL, timers
  /// and (no) bridge support.
  static let modelOnlyOptions = [
    "profile", "control", "control-password", "control-cookie", "mock-map", "directory-url",
    "relay", "bootstrap-seconds", "seed", "tor-binary", "bridge",
  ]

  func runBitchatSource(_ arguments: ParsedArguments, checkout: String) throws -> Int32 {
    for name in Self.modelOnlyOptions where arguments.value(name) != nil {
      throw UsageError("--\(name) is the model's; it does not apply with --bitchat-src")
    }
    if let scale = arguments.value("time-scale"), Double(scale) != 1 {
      throw UsageError(
        "--time-scale \(scale): bitchat's own code reads the wall clock; only 1 is possible")
    }
    let backend = arguments.value("backend") ?? "arti"
    guard ["arti", "tor"].contains(backend) else {
      throw UsageError("--backend \(backend): with --bitchat-src, expected arti or tor")
    }
    let transport: BitchatSourceTransport
    do {
      transport = try BitchatSourceTransport(
        option: arguments.value("transport") ?? BitchatSourceTransport.apple.rawValue)
    } catch { throw UsageError(error.description) }
    if backend == "tor" && arguments.value("torrc-base") == nil {
      throw UsageError("--backend tor needs --torrc-base FILE (the network's client settings)")
    }
    let socks = arguments.value("socks") ?? "127.0.0.1:39050"
    guard SocketAddress(socks) != nil else {
      throw UsageError("--socks: expected HOST:PORT with an IP address, got '\(socks)'")
    }
    let stateDirectory =
      arguments.value("state-dir") ?? NSTemporaryDirectory() + "failclosed-app-\(getpid())"
    var actionsPath = arguments.value("actions")!
    if actionsPath == "-" {
      try FileManager.default.createDirectory(
        atPath: stateDirectory, withIntermediateDirectories: true)
      actionsPath = stateDirectory + "/actions-stdin.jsonl"
      try FileHandle.standardInput.readDataToEndOfFile().write(
        to: URL(fileURLWithPath: actionsPath))
    }
    let driver: String
    do {
      driver = try BitchatSourceLocation.prepare(
        bitchatSource: checkout, progress: { FailClosedMain.printError($0) }
      ).executable
    } catch let error as BitchatSourceError {
      FailClosedMain.printError("failclosed app: bitchat-source: \(error)")
      return ExitCode.usage
    }
    var command = [
      driver, "--actions", actionsPath, "--state-dir", stateDirectory, "--transport",
      transport.rawValue,
    ]
    if let ca = arguments.value("ca") { command += ["--ca", ca] }
    if backend == "tor", let base = arguments.value("torrc-base") {
      command += ["--tor-base", base]
    }
    setenv("FAILCLOSED_ARTI", "external:" + socks, 1)
    let argv = command.map { strdup($0) } + [nil]
    execv(driver, argv)
    throw SystemError("execv(\(driver))")
  }
}

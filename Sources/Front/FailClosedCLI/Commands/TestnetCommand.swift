import FailClosedSupport
import Foundation
import Testnet

/// `failclosed testnet up|status|down`: a private Tor network of Debian's tor on loopback.
public struct TestnetCommand: Command {
  public init() {}
  public let name = "testnet"
  public let summary = "start, inspect or stop a private Tor network (Debian's tor)"
  public let usage = """
    Usage: failclosed testnet up [--dir DIR] [--base-port N] [--no-bridge] [--timeout SECONDS]
           failclosed testnet status [--dir DIR]
           failclosed testnet down [--dir DIR]

    up      generates authority keys and torrcs (tor-gencert, openssl genrsa), starts
            three directory authorities, an exit, a middle relay and an obfs4 bridge on
            127.0.0.1, waits until the consensus lists every relay with the flags a client
            needs (Running, Valid; Guard; Exit on the exit) and the bridge line
            exists, then leaves them running and prints the allowlist, the bridge line and a
            client torrc. Until then every tor ends with `up`: SIGINT or SIGTERM stops each
            one started so far (and its obfs4proxy), removes DIR and exits 130 or 143; a
            killed `up` (SIGKILL) takes them with it: a watcher process of its own stops
            them and removes DIR, and each tor names `up` its owning controller (ends with
            its control connection, or within tor's 15 s check). DIR defaults to
            /run/failclosed/testnet-UID/net (one network per user); its state goes beside
            it, to DIR.state.json. The authorities' keys are kept for the next run under
            $FAILCLOSED_CACHE (else $XDG_CACHE_HOME/failclosed, else
            ~/.cache/failclosed)/testnet-authority-keys, and made again when expired or corrupt.
    status  says which tor processes of the network in DIR are alive.
    down    stops every tor of the network in DIR (and the obfs4proxy each started) by PID,
            returns when all have exited, and removes DIR. A recorded PID that is no longer
            that network's tor is left alone.
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "dir", .single, valueName: "DIR", help: "where the nodes' data lives", values: .directory),
    OptionSpec("base-port", .single, valueName: "N", help: "first port of the plan (17000)"),
    OptionSpec("no-bridge", .flag, help: "leave out the obfs4 bridge"),
    OptionSpec("timeout", .single, valueName: "SECONDS", help: "readiness deadline (90)"),
  ]
  public let positionalWords = ["up", "status", "down"]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.count == 1, let action = arguments.positional.first else {
      throw UsageError("expected one action: up, status or down")
    }
    switch action {
    case "up": return try await up(arguments)
    case "status": return try status(arguments)
    case "down": return try down(arguments)
    default: throw UsageError("unknown action '\(action)' (expected up, status or down)")
    }
  }

  func up(_ arguments: ParsedArguments) async throws -> Int32 {
    let directory = Self.directory(arguments)
    let statePath = TestnetState.path(forDirectory: directory)
    if let existing = try? TestnetState.load(from: statePath),
      existing.pids.values.contains(where: { kill($0, 0) == 0 })
    {
      throw UsageError(
        "a network is already running in \(existing.directory); run 'testnet down --dir "
          + "\(existing.directory)'")
    }
    // Every option is checked before anything starts (a bad --timeout used to surface only
    // after the network's tor processes were running).
    let basePort = try arguments.integer("base-port", in: 1024...60000) ?? 17000
    let timeout = try arguments.seconds("timeout") ?? 90
    // Until the network is handed over, this process owns every tor of it: killed, however
    // (SIGKILL too), it takes them with it; SIGINT and SIGTERM also remove the directory.
    let network = TorNetwork(
      plan: .loopback(basePort: UInt16(basePort), bridge: !arguments.has("no-bridge")),
      directory: directory, owner: getpid())
    let interrupt = TestnetUpInterrupt(directory: directory, statePath: statePath)
    interrupt.arm(network)
    defer { interrupt.disarm() }
    // Cleans up if this process dies before it is responsible again (SIGKILL): each tor is
    // reported to it as it starts.
    let watcher = try TestnetUpWatcher(directory: directory, statePath: statePath)
    network.observeLaunches { _, pid, torrc in watcher.started(pid: pid, torrc: torrc) }
    let clock = SystemClock()
    do {
      // Key tools, the processes and their timed start block: on a thread of their own.
      try await BlockingIO.run("testnet.up.start") {
        try? FileManager.default.removeItem(atPath: directory)
        try network.prepare()
        try network.start()
      }
      let consensus = try await network.waitUntilReady(timeout: timeout)
      let ready = clock.now
      let clientTorrc = directory + "/client.torrc"
      try network.builder.client(dataDirectory: directory + "/client").write(
        toFile: clientTorrc, atomically: true, encoding: .utf8)
      let state = TestnetState(
        directory: directory, pids: network.pids, allowlist: try network.allowlist(),
        bridgeLine: try network.bridgeLine()?.text, clientTorrc: clientTorrc, readySeconds: ready)
      // The hand-over: the state saved for `down`, then each tor given back (it outlives this
      // process from then on). A signal before it stops everything; after it, nothing.
      try await BlockingIO.run("testnet.up.handover") {
        try interrupt.commit {
          try state.save(to: statePath)
          do {
            try network.releaseOwnership()
          } catch {
            try? FileManager.default.removeItem(atPath: statePath)
            throw error
          }
          network.release()
          watcher.done()
        }
      }
      print(
        "testnet: ready in \(String(format: "%.1f", ready)) s, consensus lists "
          + consensus.routers.map(\.nickname).joined(separator: ", "))
      print(
        "authority keys: "
          + (network.reusedKeys.isEmpty
            ? "made" : "from the cache for \(network.reusedKeys.joined(separator: ", "))")
          + (network.keyCache.map { " (\($0.directory))" } ?? ""))
      print("allowlist: " + state.allowlist.joined(separator: " "))
      if let bridge = state.bridgeLine { print("bridge: \(bridge)") }
      print("client torrc: \(clientTorrc)  (tor -f \(clientTorrc))")
      return ExitCode.pass
    } catch {
      let interrupted = try await BlockingIO.run("testnet.up.stop") {
        network.stop()
        let interrupted = interrupt.interrupted()
        // Stopped here: the directory stays, with the logs (the signal's teardown removes it).
        if !interrupted { watcher.done() }
        return interrupted
      }
      // A signal's teardown removes the directory and exits (130, 143).
      if interrupted { await interrupt.park() }
      throw error
    }
  }

  /// `--dir`, or the per-user default, without a trailing slash.
  static func directory(_ arguments: ParsedArguments) -> String {
    var directory = arguments.value("dir") ?? TestnetState.defaultDirectory
    while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
    return directory
  }

  func status(_ arguments: ParsedArguments) throws -> Int32 {
    let statePath = TestnetState.path(forDirectory: Self.directory(arguments))
    guard let state = try? TestnetState.load(from: statePath) else {
      print("testnet: no network (no \(statePath))")
      return ExitCode.inconclusive
    }
    var alive = 0
    for (name, pid) in state.pids.sorted(by: { $0.key < $1.key }) {
      let running = kill(pid, 0) == 0
      if running { alive += 1 }
      print(
        "\(name.padding(toLength: 8, withPad: " ", startingAt: 0)) pid \(pid) "
          + (running ? "running" : "gone"))
    }
    print("allowlist: " + state.allowlist.joined(separator: " "))
    return alive == state.pids.count ? ExitCode.pass : ExitCode.inconclusive
  }

  func down(_ arguments: ParsedArguments) throws -> Int32 {
    let statePath = TestnetState.path(forDirectory: Self.directory(arguments))
    guard let state = try? TestnetState.load(from: statePath) else {
      print("testnet: nothing to stop (no \(statePath))")
      return ExitCode.pass
    }
    // Returns only when every tor and every obfs4proxy they started has exited.
    let outcome = TestnetShutdown.stop(state)
    for name in outcome.notOurs {
      FailClosedMain.printError("testnet: \(name) is no longer this network's tor; left alone")
    }
    guard outcome.stillRunning.isEmpty else {
      FailClosedMain.printError(
        "testnet: still running after SIGKILL: pids "
          + outcome.stillRunning.map(String.init).joined(separator: ", "))
      return ExitCode.inconclusive
    }
    try? FileManager.default.removeItem(atPath: state.directory)
    try? FileManager.default.removeItem(atPath: statePath)
    print("testnet: stopped \(outcome.stopped) processes; all have exited")
    return ExitCode.pass
  }
}

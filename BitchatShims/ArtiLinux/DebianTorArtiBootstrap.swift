import FailClosedSupport
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The real-Tor lane's Arti: Debian's tor, started by arti_start's task in whatever namespace
/// the app runs in (the device), pinned to the private network's authorities
/// (``DebianTorArtiConfiguration``). What lib.rs gets from arti-client maps onto it:
/// `TorClient::create_bootstrapped` is "start tor, wait until it reports PROGRESS=100" (it
/// does not look at the stop signal, so an instance stopped while bootstrapping goes on, as in
/// lib.rs); the SOCKS listener is `SETCONF SocksPort` sent only then (tor runs with
/// `SocksPort 0` before), failing as a bind would when the port is taken; dropping the client
/// stops that tor. Every instance is its own tor with its own data and control port, because
/// lib.rs lets an old instance still bootstrapping overlap the new one.
public final class DebianTorArtiBootstrap: ArtiBootstrap, @unchecked Sendable {
  public let configuration: DebianTorArtiConfiguration
  private let counter = NSLock()
  private var instances = 0

  public init(configuration: DebianTorArtiConfiguration) {
    self.configuration = configuration
  }

  public func bootstrap(stateDirectory: String, cacheDirectory: String) throws -> any ArtiClient {
    let number = counter.withLock {
      instances += 1
      return instances
    }
    let instance = TorInstance(
      configuration: configuration, directory: stateDirectory + "/debian-tor-\(number)")
    do {
      try instance.start()
      try instance.waitUntilBootstrapped()
    } catch {
      instance.stop()
      throw error
    }
    return instance
  }
}

/// One tor process: its torrc, its control connection, its end.
final class TorInstance: ArtiClient, ArtiListener, @unchecked Sendable {
  let configuration: DebianTorArtiConfiguration
  let directory: String
  private let lock = NSLock()
  private var pid: pid_t = 0
  private var control: TorControlLink?

  init(configuration: DebianTorArtiConfiguration, directory: String) {
    self.configuration = configuration
    self.directory = directory
  }

  var dataDirectory: String { directory + "/data" }
  var controlPortFile: String { directory + "/control-port" }

  func start() throws {
    let files = FileManager.default
    try? files.removeItem(atPath: directory)
    try files.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
    chmod(dataDirectory, 0o700)
    try files.createDirectory(atPath: configuration.logDirectory, withIntermediateDirectories: true)
    let torrcPath = directory + "/torrc"
    try configuration.torrc(
      dataDirectory: dataDirectory, controlPortFile: controlPortFile, owner: getpid()
    ).write(toFile: torrcPath, atomically: true, encoding: .utf8)
    let actions = FileActions()
    let output = configuration.logDirectory + "/tor-output.log"
    actions.open(output, to: 1, flags: O_WRONLY | O_CREAT | O_APPEND)
    actions.open(output, to: 2, flags: O_WRONLY | O_CREAT | O_APPEND)
    let started = try Spawner.spawn(
      [configuration.torBinary, "-f", torrcPath, "--defaults-torrc", "/dev/null", "--hush"],
      actions: actions)
    lock.withLock { pid = started }
  }

  /// Blocks until tor reports PROGRESS=100, as create_bootstrapped blocks until bootstrapped.
  func waitUntilBootstrapped() throws {
    let link = try connectControl()
    lock.withLock { control = link }
    while true {
      let phase: String
      do {
        phase = try link.bootstrapPhase()
      } catch {
        throw exitError() ?? error
      }
      if TorBootstrapPhase(phase)?.artiProgress == 100 { return }
      usleep(100_000)
    }
  }

  /// Waits (bounded) for tor's control port file and cookie, then authenticates.
  private func connectControl() throws -> TorControlLink {
    let deadline = ProcessInfo.processInfo.systemUptime + 30
    while ProcessInfo.processInfo.systemUptime < deadline {
      if let error = exitError() { throw error }
      if let text = try? String(contentsOfFile: controlPortFile, encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT=") }),
        let address = SocketAddress(String(line.dropFirst(5))),
        FileManager.default.fileExists(atPath: dataDirectory + "/control_auth_cookie")
      {
        return try TorControlLink(
          address: address, cookiePath: dataDirectory + "/control_auth_cookie")
      }
      usleep(50_000)
    }
    throw ArtiTorError("tor's control port was not ready after 30 s (\(directory))")
  }

  /// "tor exited with status N" once the process has ended, nil while it runs.
  private func exitError() -> ArtiTorError? {
    let current = lock.withLock { pid }
    guard current > 0, let status = Spawner.poll(current) else { return nil }
    lock.withLock { pid = 0 }
    return ArtiTorError("tor exited with status \(status)")
  }

  /// lib.rs's TcpListener::bind, after the bootstrap.
  func serveSOCKS(port: UInt16) throws -> any ArtiListener {
    guard let link = lock.withLock({ control }) else { throw ArtiTorError("tor is not running") }
    try link.bindSOCKS(port: port)
    return self
  }

  /// Dropping the client: the control connection closes (tor, owned by it, exits) and tor gets
  /// SIGTERM; it is reaped on a thread of its own, so arti_stop's 200 ms are not lengthened.
  func stop() {
    let (link, current) = lock.withLock {
      defer {
        control = nil
        pid = 0
      }
      return (control, pid)
    }
    link?.close()
    guard current > 0 else { return }
    kill(current, SIGTERM)
    Thread.detachNewThread {
      var status = Spawner.poll(current)
      var waits = 0
      while status == nil && waits < 40 {
        usleep(50_000)
        waits += 1
        status = Spawner.poll(current)
      }
      if status == nil {
        kill(current, SIGKILL)
        _ = Spawner.wait(current)
      }
    }
  }
}

import Audit
import FailClosedSupport
import Foundation
import Sandbox
import Testnet
import TorControl

/// `failclosed exec --tor real`: instead of the mock, Debian's tor runs in the device as the
/// program's Tor (SOCKS 127.0.0.1:39050, control port 127.0.0.1:39051 with cookie
/// authentication), a client of the private network that runs in the world (the real-Tor
/// lane's ``WorldTestnet``). The client is pinned: its torrc names only the network's
/// authorities (DirAuthority lines, no fallback directories), and it runs inside the device,
/// whose only route leads through the censor to the world. The audit allows the relays of the
/// network's consensus and its bridge, nothing else.
public final class ExecRealTor: @unchecked Sendable {
  /// Holds the network's nodes (`net/`) and the client's data and logs (`client/`).
  public let directory: String
  /// Seconds the client may take to reach 100% before the run is a setup error.
  public let bootstrapTimeout: Double
  private let testnet = Locked<WorldTestnet?>(nil)
  private let times = Locked<(network: Double, bootstrap: Double)>((0, 0))

  public init(directory: String, bootstrapTimeout: Double = 90) {
    self.directory = directory
    self.bootstrapTimeout = bootstrapTimeout
  }

  /// Seconds the network took to become ready, and the client to bootstrap.
  public var networkReadySeconds: Double { times.withLock { $0.network } }
  public var bootstrapSeconds: Double { times.withLock { $0.bootstrap } }
  public var clientDirectory: String { directory + "/client" }

  /// ``SandboxExec/WorldPreparation``: starts the private network in the run's world (its
  /// tors recorded with the run, so every exit path stops them) and returns its allowlist.
  public func prepare(_ run: SandboxRun) throws -> AllowedEndpoints {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let network = WorldTestnet(sandbox: run, directory: directory + "/net")
    testnet.withLock { $0 = network }
    run.recordService("testnet") { network.stop() }
    // The exit resolves names at the world's 127.0.0.1 (its fallback): answer there.
    try run.startWorldLoopbackResolver()
    try Self.wait { try await network.start() }
    times.withLock { $0.network = network.readySeconds }
    return try network.allowlist()
  }

  /// ``SandboxExec/TorStarter``: Debian's tor in the device, waited for until it reports 100%.
  public func torStarter() -> SandboxExec.TorStarter {
    { [self] run in
      guard let network = testnet.withLock({ $0 }) else {
        throw TestnetError.notReady(waited: 0, detail: "the private network was not prepared")
      }
      let torrc =
        ClientTorrc.options(
          dataDirectory: clientDirectory, logDirectory: clientDirectory, socksPort: 39050,
          controlPort: 39051, bridges: [], disableNetwork: false)
        + ["UseDefaultFallbackDirs 0"] + network.network.builder.common
      let client = try TorClientProcess(
        torrc: torrc.joined(separator: "\n") + "\n", dataDirectory: clientDirectory,
        prefix: ["ip", "netns", "exec", run.device.name])
      run.recordProcess(client.pid, group: false)
      do {
        let seconds = try Self.wait {
          try await client.waitForBootstrap(timeout: self.bootstrapTimeout)
        }
        times.withLock { $0.bootstrap = seconds }
      } catch {
        client.stop()
        throw error
      }
      return { client.stop() }
    }
  }

  /// Runs async work to its end from a dedicated (blocking) thread: ``SandboxExec`` calls its
  /// hooks from one, never from the cooperative pool, so waiting here starves nothing.
  static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let outcome = Locked<Result<T, any Error>?>(nil)
    Task {
      do {
        let value = try await body()
        outcome.withLock { $0 = .success(value) }
      } catch {
        outcome.withLock { $0 = .failure(error) }
      }
      done.signal()
    }
    done.wait()
    return try outcome.withLock { $0! }.get()
  }
}

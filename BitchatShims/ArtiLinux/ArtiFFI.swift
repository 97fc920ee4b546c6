// arti.h for Linux, following bitchat's arti-bitchat/src/lib.rs line by line: the same return
// codes, the same summaries in the same order, progress only 0 or 100, arti_stop's 200 ms
// sleep, and the SOCKS listener bound only after the bootstrap. What lib.rs gets from
// arti-client (TorClient::create_bootstrapped, the SOCKS listener) comes from an ArtiBootstrap
// backend: on the mock lane, the harness's mock Tor with the arti personality, which itself
// binds SOCKS only once bootstrapped; on the real-Tor lane, Debian's tor (DebianTorArtiBootstrap).
// One addition that is not lib.rs: a scenario may fix which of two overlapping bootstraps ends
// first (ArtiBootstrapEndOrder), which with a real Arti its retry schedule decides.
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// lib.rs's statics: ARTI_STATE's shutdown sender, IS_RUNNING, BOOTSTRAP_PROGRESS,
/// BOOTSTRAP_SUMMARY.
final class ArtiState: @unchecked Sendable {
  static let shared = ArtiState()
  private let lock = NSLock()
  private var running = false
  private var progress: Int32 = 0
  private var summary = ""
  private var shutdown: ArtiShutdown?
  var backend: any ArtiBootstrap = ArtiBackendChoice.fromEnvironment()
  /// Not lib.rs: the instances and the order their bootstraps end in (ArtiBootstrapEndOrder).
  let instances = ArtiInstances()

  var isRunning: Bool {
    get { lock.withLock { running } }
    set { lock.withLock { running = newValue } }
  }
  var bootstrapProgress: Int32 {
    get { lock.withLock { progress } }
    set { lock.withLock { progress = newValue } }
  }
  var bootstrapSummary: String {
    get { lock.withLock { summary } }
    set { lock.withLock { summary = newValue } }
  }
  func replaceShutdown(_ new: ArtiShutdown?) -> ArtiShutdown? {
    lock.withLock {
      let old = shutdown
      shutdown = new
      return old
    }
  }
}

/// lib.rs's oneshot shutdown channel: sent once, observed by the running task.
final class ArtiShutdown: @unchecked Sendable {
  /// The instance (``ArtiInstances``) this channel stops.
  let instance: Int
  private let condition = NSCondition()
  private var sent = false
  init(instance: Int) { self.instance = instance }
  func send() {
    condition.lock()
    sent = true
    condition.broadcast()
    condition.unlock()
  }
  var isSent: Bool {
    condition.lock()
    defer { condition.unlock() }
    return sent
  }
  func wait() {
    condition.lock()
    while !sent { condition.wait() }
    condition.unlock()
  }
}

/// What arti-client does in lib.rs's run_arti: bootstrap (TorClient::create_bootstrapped, which
/// does not look at the shutdown signal), then serve SOCKS on `socksPort` until shutdown.
public protocol ArtiBootstrap: Sendable {
  /// Blocks until bootstrapped; throws the error text lib.rs would put after "Error: ".
  func bootstrap(stateDirectory: String, cacheDirectory: String) throws -> any ArtiClient
}

/// A bootstrapped client (lib.rs's TorClient).
public protocol ArtiClient: Sendable {
  /// Binds the SOCKS listener (after the bootstrap) and serves until `stop` is called.
  func serveSOCKS(port: UInt16) throws -> any ArtiListener
}

public protocol ArtiListener: Sendable {
  func stop()
}

/// Which backend. The mock lane: FAILCLOSED_ARTI=external:HOST:PORT (default
/// external:127.0.0.1:39050) waits for the harness's mock Tor (arti personality) to bind its
/// SOCKS port, which it does only once its bootstrap plan completes; that port then is the
/// listener. The real-Tor lane: the driver's `--tor-base` calls ``useDebianTor(_:)``.
public enum ArtiBackendChoice {
  static func fromEnvironment() -> any ArtiBootstrap {
    let value = ProcessInfo.processInfo.environment["FAILCLOSED_ARTI"] ?? "external:127.0.0.1:39050"
    let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
    let address = parts.count == 2 ? parts[1] : "127.0.0.1:39050"
    return ExternalArtiBootstrap(address: address)
  }

  /// The order overlapping bootstraps end in, for every later arti_start (the driver's
  /// `--bootstrap-end-order`, from the scenario).
  public static func orderBootstrapEnds(_ order: ArtiBootstrapEndOrder) {
    ArtiState.shared.instances.order = order
  }

  /// Every later arti_start runs Debian's tor (``DebianTorArtiBootstrap``).
  public static func useDebianTor(_ configuration: DebianTorArtiConfiguration) {
    ArtiState.shared.backend = DebianTorArtiBootstrap(configuration: configuration)
  }
}

// arti.h's C names: bitchat calls these symbols, so the names stay as lib.rs exports them.
// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("arti_start")
public func arti_start(_ dataDir: UnsafePointer<CChar>?, _ socksPort: UInt16) -> Int32 {
  let state = ArtiState.shared
  if state.isRunning { return -1 }
  guard let dataDir, let path = String(validatingCString: dataDir) else { return -2 }
  let shutdown = ArtiShutdown(instance: state.instances.begin())
  _ = state.replaceShutdown(shutdown)
  let backend = state.backend
  // lib.rs spawns run_arti on the tokio runtime, then sets IS_RUNNING and "Starting..."; the
  // spawned task runs once a worker picks it up, after those stores. The thread waits for
  // them so "Starting..." is never written over "Configuring..." or "Bootstrapping...".
  let spawned = DispatchSemaphore(value: 0)
  Thread.detachNewThread {
    spawned.wait()
    do {
      try runArti(dataDirectory: path, socksPort: socksPort, shutdown: shutdown, backend: backend)
    } catch {
      state.bootstrapSummary = "Error: \(error)"
    }
    state.isRunning = false
    state.bootstrapProgress = 0
    state.instances.exited(shutdown.instance)
  }
  state.isRunning = true
  state.bootstrapProgress = 0
  state.bootstrapSummary = "Starting..."
  spawned.signal()
  return 0
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("arti_stop")
public func arti_stop() -> Int32 {
  let state = ArtiState.shared
  if !state.isRunning { return -1 }
  if let shutdown = state.replaceShutdown(nil) {
    state.instances.stop(shutdown.instance)
    shutdown.send()
  }
  // lib.rs: "Give async tasks time to complete".
  usleep(200_000)
  state.isRunning = false
  state.bootstrapProgress = 0
  state.bootstrapSummary = ""
  return 0
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("arti_is_running")
public func arti_is_running() -> Int32 { ArtiState.shared.isRunning ? 1 : 0 }

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("arti_bootstrap_progress")
public func arti_bootstrap_progress() -> Int32 { ArtiState.shared.bootstrapProgress }

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("arti_bootstrap_summary")
public func arti_bootstrap_summary(_ buffer: UnsafeMutablePointer<CChar>?, _ length: Int32) -> Int32
{
  guard let buffer, length > 0 else { return -1 }
  let bytes = Array(ArtiState.shared.bootstrapSummary.utf8)
  let count = min(bytes.count, Int(length) - 1)
  for index in 0..<count { buffer[index] = CChar(bitPattern: bytes[index]) }
  buffer[count] = 0
  return Int32(count)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("arti_go_dormant")
public func arti_go_dormant() -> Int32 {
  guard ArtiState.shared.isRunning else { return -1 }
  ArtiState.shared.bootstrapSummary = "Dormant"
  return 0
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("arti_wake")
public func arti_wake() -> Int32 {
  guard ArtiState.shared.isRunning else { return -1 }
  ArtiState.shared.bootstrapSummary = "Active"
  return 0
}

/// lib.rs's run_arti.
func runArti(
  dataDirectory: String, socksPort: UInt16, shutdown: ArtiShutdown, backend: any ArtiBootstrap
) throws {
  let state = ArtiState.shared
  try FileManager.default.createDirectory(
    atPath: dataDirectory, withIntermediateDirectories: true)
  state.bootstrapSummary = "Configuring..."
  let stateDirectory = dataDirectory + "/state"
  let cacheDirectory = dataDirectory + "/cache"
  state.bootstrapSummary = "Bootstrapping..."
  let client = try backend.bootstrap(stateDirectory: stateDirectory, cacheDirectory: cacheDirectory)
  state.instances.holdBootstrapEnd(shutdown.instance)
  state.bootstrapProgress = 100
  state.bootstrapSummary = "Ready"
  state.instances.bootstrapEnded(shutdown.instance)
  let listener = try client.serveSOCKS(port: socksPort)
  shutdown.wait()
  // lib.rs: the summary, then run_arti returns and drops the listener and the client.
  state.bootstrapSummary = "Shutting down..."
  listener.stop()
}

import FailClosedSupport
import Foundation
import OnionBrowserModel
import TestSupport
import Testing
import TorControl

@testable import SystemUnderTest

/// The tor backend's input checks, and Debian's tor started, driven and stopped by it. The
/// process tests pin tor to loopback (authority and bridges on 127.0.0.1, nothing listening):
/// it may run here in the host's namespace, and reaches nothing.
@Suite struct DebianTorBackendTests {
  static let authority =
    "DirAuthority auth1 orport=2 no-v2 v3ident=\(String(repeating: "A", count: 40)) "
    + "127.0.0.1:1 \(String(repeating: "B", count: 40))"
  static let base = "TestingTorNetwork 1\nRunAsDaemon 0\nSandbox 0\n\(authority)\n"

  static func directory() throws -> String {
    let path = NSTemporaryDirectory() + "fc-debian-tor-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  static func configuration(
    base: String = DebianTorBackendTests.base, in directory: String, confined: Bool = true,
    socks: UInt16 = 39050, control: UInt16 = 39051
  ) throws -> DebianTorConfiguration {
    try base.write(toFile: directory + "/base.torrc", atomically: true, encoding: .utf8)
    var configuration = try DebianTorConfiguration(
      baseTorrcPath: directory + "/base.torrc", stateDirectory: directory + "/state",
      socks: SocketAddress("127.0.0.1:\(socks)")!, control: SocketAddress("127.0.0.1:\(control)")!,
      confinedToLoopback: confined)
    configuration.controlWaitSeconds = 20
    return configuration
  }

  @Test func aMissingBaseNamesTheFlagAndThePath() {
    #expect(throws: DebianTorConfigurationError("--torrc-base /nonexistent/base: no such file")) {
      try DebianTorConfiguration(
        baseTorrcPath: "/nonexistent/base", stateDirectory: "/tmp",
        socks: SocketAddress("127.0.0.1:39050")!)
    }
    #expect(
      throws: DebianTorConfigurationError("--tor-binary /nonexistent/tor: not an executable file")
    ) {
      try DebianTorConfiguration(
        baseTorrcPath: "/etc/hostname", torBinary: "/nonexistent/tor", stateDirectory: "/tmp",
        socks: SocketAddress("127.0.0.1:39050")!)
    }
  }

  @Test func theBaseMayNotSetWhatTheAppOwns() throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/base.torrc"
    #expect(
      throws: DebianTorConfigurationError(
        "--torrc-base \(path):3: 'SocksPort' is set by the app itself; remove it from the base")
    ) {
      try Self.configuration(
        base: Self.base.replacingOccurrences(of: "Sandbox 0", with: "SocksPort 9050"), in: directory
      )
    }
    #expect(
      throws: DebianTorConfigurationError(
        "--torrc-base \(path):2: tor must not run as a daemon (RunAsDaemon 0)")
    ) {
      try Self.configuration(
        base: Self.base.replacingOccurrences(of: "RunAsDaemon 0", with: "RunAsDaemon 1"),
        in: directory)
    }
    #expect(
      throws: DebianTorConfigurationError(
        "--torrc-base \(path): no DirAuthority line (tor would use the public Tor network)")
    ) {
      try Self.configuration(base: "TestingTorNetwork 1\n", in: directory)
    }
  }

  /// In the host's namespace tor may only be sent to loopback; in the harness's device the
  /// private network's addresses are fine.
  @Test func outsideAHarnessNamespaceTheNetworkMustBeLoopback() throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let world = Self.base.replacingOccurrences(of: "127.0.0.1:1 ", with: "10.66.1.101:9030 ")
    #expect(
      throws: DebianTorConfigurationError(
        "--torrc-base \(directory)/base.torrc:4: DirAuthority at 10.66.1.101:9030 is not on "
          + "loopback, and this process runs in the host's network namespace (run it in the "
          + "harness's device namespace)")
    ) {
      try Self.configuration(base: world, in: directory, confined: true)
    }
    let inDevice = try Self.configuration(base: world, in: directory, confined: false)
    #expect(inDevice.directoryAddresses == ["10.66.1.101:9030"])
    #expect(inDevice.directory == directory + "/state/tor")
  }

  /// Starts the backend under `profile` with `bridges` in the store, lets its controller take
  /// over, then stops it; returns the torrc tor was given and the events.
  @AppActor static func runBackend(
    profile: SUTProfile, bridges: [String]?, in directory: String,
    onionBrowser: OnionBrowserVersion? = nil
  ) async throws -> (
    result: Int32, torrc: String?, events: [AppEvent], pid: Int32?, progress: Int
  ) {
    let configuration = try Self.configuration(
      in: directory, socks: try freeLoopbackPort(), control: try freeLoopbackPort())
    let clock = SystemClock()
    let log = AppEventLog(clock: clock)
    let store = KeyValueStore()
    if let bridges { store.set(bridges, forKey: TorBridgeSettings.storeKey) }
    let backend = DebianTorBackend(
      configuration: configuration, profile: profile, store: store,
      scheduler: ClockScheduler(clock: clock), log: log, onionBrowser: onionBrowser)
    let result = backend.start(dataDirectory: "", socksPort: configuration.socksPort)
    let pid = backend.torPID
    // Bounded: until the controller has taken over, then its first bootstrap report.
    for _ in 0..<100 where result == 0 && !backend.isControlled {
      try await Task.sleep(nanoseconds: 100_000_000)
    }
    for _ in 0..<30 where backend.isControlled && backend.bootstrapProgress() == 0 {
      try await Task.sleep(nanoseconds: 100_000_000)
    }
    let progress = backend.bootstrapProgress()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      backend.stop { continuation.resume() }
    }
    #expect(!backend.isRunning())
    let torrc = try? String(contentsOfFile: configuration.torrcPath, encoding: .utf8)
    return (result, torrc, log.events, pid, progress)
  }

  @Test(.timeLimit(.minutes(1)))
  func startsDrivesAndStopsTorWithoutBridgesForBitchat() async throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let bridge = "127.0.0.1:2"
    let run = try await Self.runBackend(profile: .bitchat, bridges: [bridge], in: directory)
    #expect(run.result == 0)
    let torrc = try #require(run.torrc)
    #expect(torrc.hasPrefix(Self.base))
    #expect(torrc.contains("DisableNetwork 1"))
    #expect(torrc.contains("__OwningControllerProcess \(getpid())"))
    #expect(!torrc.contains("UseBridges"))
    #expect(!torrc.contains("Bridge "))
    let pid = try #require(run.pid)
    #expect(kill(pid, 0) != 0, "tor \(pid) still exists after stop")
    // The backend's own process events (the controller adds its connection's).
    let process = run.events.filter { event in
      event.kind == .tor && event["phase"] == "process"
        && ["started pid", "exited status"].contains {
          event["detail"]?.description.hasPrefix($0) == true
        }
    }
    #expect(
      process.map { $0["detail"]?.description ?? "" } == [
        "started pid \(pid) in the host's namespace (loopback only)", "exited status 0",
      ])
    let bridges = run.events.first { $0.kind == .state && $0["field"] == "bridges" }
    #expect(bridges?["value"] == "ignored")
    #expect(bridges?["count"] == 1)
    // The controller enabled the network: tor got to its first step, connecting to the
    // authority (nothing listens there).
    #expect(run.progress == 5)
  }

  @Test(.timeLimit(.minutes(1)))
  func hardenedStartsTorWithOnlyTheBridges() async throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let run = try await Self.runBackend(profile: .hardened, bridges: ["127.0.0.1:2"], in: directory)
    #expect(run.result == 0)
    let torrc = try #require(run.torrc)
    #expect(torrc.contains("UseBridges 1\nBridge 127.0.0.1:2\n"))
    #expect(run.pid.map { kill($0, 0) != 0 } == true)
  }

  /// Every Onion Browser version configures bridges: 1.X writes UseBridges, Bridge (and
  /// ClientTransportPlugin) into its torrc (AppDelegate.m @6ec0fdfc l.499-527), 2.X and 3.X pass
  /// them at start (OnionManager.swift @9a17dd4f l.171, TorManager.swift @44edf9a8 l.304).
  @Test(.timeLimit(.minutes(1)), arguments: OnionBrowserVersion.allCases)
  func everyOnionBrowserVersionStartsTorWithItsBridges(_ version: OnionBrowserVersion)
    async throws
  {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let run = try await Self.runBackend(
      profile: .hardened, bridges: ["127.0.0.1:2"], in: directory, onionBrowser: version)
    #expect(run.result == 0)
    let torrc = try #require(run.torrc)
    #expect(torrc.contains("UseBridges 1\nBridge 127.0.0.1:2\n"))
    #expect(run.pid.map { kill($0, 0) != 0 } == true)
    // The harness's TAKEOWNERSHIP only where tor would die with the connection anyway.
    let commands = run.events.filter { $0.kind == .tor && $0["phase"] == "command" }
      .compactMap { $0["command"]?.description }
    #expect(commands.contains("TAKEOWNERSHIP") == (version != .v1))
  }

  @Test(.timeLimit(.minutes(1)))
  func hardenedWithAMalformedListDoesNotStartTor() async throws {
    let directory = try Self.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let run = try await Self.runBackend(
      profile: .hardened, bridges: ["127.0.0.1:2", "127.0.0.1:3 XYZ"], in: directory)
    #expect(run.result == -3)
    #expect(run.torrc == nil)
    #expect(run.pid == nil)
    #expect(!run.events.contains { $0.kind == .tor })
    let error = run.events.first { $0.kind == .error }?["message"]?.description ?? ""
    #expect(
      error.hasPrefix("tor.bridges[1]: 'XYZ' is not a 40-hex-digit fingerprint; tor not started"))
  }
}

/// A tor that dies under the app is reaped and reported, and the backend no longer runs.
@Suite struct DebianTorBackendDeathTests {
  @Test(.timeLimit(.minutes(1)))
  @AppActor func aKilledTorIsReapedAndReported() async throws {
    let directory = try DebianTorBackendTests.directory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let configuration = try DebianTorBackendTests.configuration(
      in: directory, socks: try freeLoopbackPort(),
      control: try freeLoopbackPort())
    let clock = SystemClock()
    let log = AppEventLog(clock: clock)
    let backend = DebianTorBackend(
      configuration: configuration, profile: .hardened, store: KeyValueStore(),
      scheduler: ClockScheduler(clock: clock), log: log)
    #expect(backend.start(dataDirectory: "", socksPort: configuration.socksPort) == 0)
    let pid = try #require(backend.torPID)
    for _ in 0..<100 where !backend.isControlled {
      try await Task.sleep(nanoseconds: 100_000_000)
    }
    kill(pid, SIGKILL)
    for _ in 0..<100 where backend.torPID != nil {
      try await Task.sleep(nanoseconds: 50_000_000)
    }
    #expect(backend.torPID == nil)
    let exit = log.events.first {
      $0.kind == .tor && $0["detail"]?.description.hasPrefix("exited status") == true
    }
    #expect(exit?["detail"] == "exited status 137")
    #expect(exit?["summary"] == "killed by signal 9")
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      backend.stop { continuation.resume() }
    }
    #expect(!backend.isRunning())
  }
}

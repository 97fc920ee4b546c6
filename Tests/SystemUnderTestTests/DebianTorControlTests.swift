import FailClosedSupport
import Foundation
import OnionBrowserModel
import TestSupport
import Testing
import TorControl

@testable import SystemUnderTest

/// The backend against Debian's tor, once. SAFETY: this machine reaches the Internet, so the tor
/// here can never contact a public relay: `UseBridges 1` with the only bridge at 127.0.0.1:1
/// (tor then connects nowhere else; nothing listens there, so it stalls at 5 % with
/// CONNECTREFUSED), DisableNetwork 1 until the controller's `SETCONF DisableNetwork=0`, ports
/// on 127.0.0.1 below the ephemeral range, a fresh DataDirectory. TAKEOWNERSHIP and
/// __OwningControllerProcess make tor exit with the connection or with this process; on every
/// exit path the test sends SIGTERM, then SIGKILL after 1 s.
@Suite struct DebianTorControlTests {
  static let torPath = "/usr/bin/tor"

  /// A tor child process, stopped on every exit path.
  final class TorChild: @unchecked Sendable {
    let process = Process()
    let directory: String
    let controlPort: UInt16
    let socksPort: UInt16

    init() throws {
      directory = NSTemporaryDirectory() + "failclosed-obctl-\(UUID().uuidString.prefix(8))"
      try FileManager.default.createDirectory(
        atPath: directory + "/data", withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
      let ports = try Self.freePorts(2)
      controlPort = ports[0]
      socksPort = ports[1]
      let torrc = """
        DataDirectory \(directory)/data
        SocksPort 127.0.0.1:\(ports[1])
        ControlPort 127.0.0.1:\(ports[0])
        CookieAuthentication 1
        UseBridges 1
        Bridge 127.0.0.1:1
        DisableNetwork 1
        ClientOnly 1
        AvoidDiskWrites 1
        RunAsDaemon 0
        __OwningControllerProcess \(getpid())
        Log notice file \(directory)/notice.log

        """
      try torrc.write(toFile: directory + "/torrc", atomically: true, encoding: .utf8)
      process.executableURL = URL(fileURLWithPath: DebianTorControlTests.torPath)
      process.arguments = ["-f", directory + "/torrc"]
      process.standardInput = FileHandle.nullDevice
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
    }

    var cookiePath: String { directory + "/data/control_auth_cookie" }

    /// SIGTERM, SIGKILL after 1 s (a child may inherit a blocked SIGTERM), then removes the
    /// directory.
    func stop() {
      if process.isRunning {
        kill(process.processIdentifier, SIGTERM)
        _ = waitUntil(timeout: 1) { !process.isRunning }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
      }
      try? FileManager.default.removeItem(atPath: directory)
    }

    /// Ports in 20000-32767 (below the ephemeral range) that bind now.
    static func freePorts(_ count: Int) throws -> [UInt16] {
      var ports: [UInt16] = []
      for _ in 0..<200 where ports.count < count {
        let port = UInt16.random(in: 20000...32767)
        guard !ports.contains(port),
          let socket = try? Socket.listen(on: SocketAddress(host: "127.0.0.1", port: port)!)
        else { continue }
        socket.close()
        ports.append(port)
      }
      guard ports.count == count else { throw ControlClientError("no free ports") }
      return ports
    }
  }

  @Test(
    .needs("needs /usr/bin/tor", if: FileManager.default.isExecutableFile(atPath: torPath)),
    .timeLimit(.minutes(1)))
  func drivesDebiansTorWithCookieAuthentication() async throws {
    try #require(FileManager.default.isExecutableFile(atPath: Self.torPath), "needs /usr/bin/tor")
    let tor = try TorChild()
    defer { tor.stop() }
    // tor writes the cookie, then listens.
    let control = SocketAddress(host: "127.0.0.1", port: tor.controlPort)!
    let ready = await waitUntil(every: 0.04) {
      guard FileManager.default.fileExists(atPath: tor.cookiePath),
        let probe = try? Socket.connect(to: control, timeout: 1)
      else { return false }
      probe.close()
      return true
    }
    try #require(ready, "tor did not open its control port")
    let log = AppEventLog(clock: SystemClock())
    var timings = OnionBrowserTimings()
    // tor warns about the refused bridge every 1-6 s and each warning re-arms the guard, so a
    // short guard is needed to see the cycle. Safe: tor's only bridge is on loopback.
    timings.stallGuard = 0.5
    timings.stallGuardCheck = 0.1
    timings.connectDelay2 = 0.1
    let backend = await Self.makeBackend(
      control: control, cookie: tor.cookiePath, log: log, timings: timings)
    func torEvents(_ phase: String) -> [AppEvent] {
      log.events(.tor).filter { $0["phase"]?.description == phase }
    }
    await Self.start(backend)
    // tor's first report after DisableNetwork=0 is 5 % "conn", then the refused bridge.
    #expect(await waitUntil { torEvents("problem").contains { $0["reason"] == "CONNECTREFUSED" } })
    #expect(torEvents("bootstrap").first?["progress"] == 5)
    #expect(torEvents("bootstrap").first?["tag"] == "conn")
    let problem = torEvents("problem").first { $0["reason"] == "CONNECTREFUSED" }
    #expect(problem?["count"] == 1)
    #expect(problem?["detail"]?.description.hasPrefix("Connection refused") == true)
    // The stall cycle, answered OK.
    #expect(
      await waitUntil {
        torEvents("command").filter { $0["command"] == "SETCONF DisableNetwork=0" }.count >= 2
      })
    await Self.networkChanged(backend)
    #expect(
      await waitUntil {
        torEvents("command").filter { $0["command"] == "SETCONF DisableNetwork=0" }.count >= 3
      })
    // RELOAD re-applied the torrc's DisableNetwork 1 (tor closes its SOCKS listener); the
    // controller enabled the network again, so the SOCKS listener is back. A TCP connect only.
    let socks = SocketAddress(host: "127.0.0.1", port: tor.socksPort)!
    let listening = await waitUntil {
      guard let probe = try? Socket.connect(to: socks, timeout: 1) else { return false }
      probe.close()
      return true
    }
    #expect(listening)
    // tor has applied the last command, so it has answered every one (in order, on the one
    // connection; a success leaves no event). Its next warning about the refused bridge comes
    // after those answers on that connection (its network was off from RELOAD until then), so
    // once the controller has logged it, it has read every answer: then nothing was refused.
    let problems = torEvents("problem").count
    #expect(await waitUntil(timeout: 20) { torEvents("problem").count > problems })
    let logged = torEvents("command").compactMap { $0["command"]?.description }
    // 2.X over Tor.framework, with the harness's TAKEOWNERSHIP and DisableNetwork=0.
    #expect(
      logged == [
        "AUTHENTICATE <secret>", "SETEVENTS STATUS_CLIENT", "GETINFO status/circuit-established",
        "TAKEOWNERSHIP", "SETCONF DisableNetwork=0",
        "SETCONF DisableNetwork=1", "SETCONF DisableNetwork=0",
        #"SETCONF ClientPreferIPv6ORPort="auto" ClientUseIPv4="1" ClientUseIPv6="1""#,
        "SIGNAL RELOAD", "SIGNAL NEWNYM", "SETCONF DisableNetwork=0",
      ])
    #expect(!torEvents("command").contains { $0["detail"]?.description.first == "5" })
    #expect(await Self.progress(backend) == 5)
    await ControlPortBackendTests.stop(backend)
    // TAKEOWNERSHIP: tor exits when the controller's connection closes.
    #expect(await waitUntil { !tor.process.isRunning })
  }

  @AppActor static func makeBackend(
    control: SocketAddress, cookie: String, log: AppEventLog, timings: OnionBrowserTimings
  ) -> ControlPortTorBackend {
    ControlPortTorBackend(
      control: control, authentication: .cookieFile(cookie),
      scheduler: ClockScheduler(clock: SystemClock()), log: log, version: .v2,
      deviation: OnionBrowserHarnessDeviation(takeOwnership: true), timings: timings)
  }

  @AppActor static func start(_ backend: ControlPortTorBackend) {
    #expect(backend.start(dataDirectory: "", socksPort: 0) == 0)
  }

  @AppActor static func networkChanged(_ backend: ControlPortTorBackend) {
    backend.networkChanged()
  }

  @AppActor static func progress(_ backend: ControlPortTorBackend) -> Int {
    backend.bootstrapProgress()
  }
}

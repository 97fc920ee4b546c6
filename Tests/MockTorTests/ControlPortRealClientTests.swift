import FailClosedSupport
import Foundation
import TestSupport
import Testing
import TorControl

@testable import MockTor

/// Proof with real clients: Debian's python3-stem against the mock's control port, and the same
/// commands sent to Debian's tor (DisableNetwork 1, so it never leaves the machine) and to the
/// mock, compared byte for byte where tor's reply is deterministic.
@Suite(.serialized) struct ControlPortRealClientTests {
  static let python = "/usr/bin/python3"
  static let tor = "/usr/bin/tor"
  static var haveStem: Bool {
    FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/stem/__init__.py")
  }

  /// Authenticates with stem (SAFECOOKIE, plain COOKIE or password), reads the bootstrap phase,
  /// subscribes to STATUS_CLIENT, clears DisableNetwork and collects BOOTSTRAP events to 100%.
  static let stemScript = """
    import json, sys, threading
    import stem.connection
    from stem.control import Controller, EventType
    port, mode, secret = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    out = {}
    with Controller.from_port(address="127.0.0.1", port=port) as c:
        if mode == "password":
            c.authenticate(password=secret)
        elif mode == "cookie":
            stem.connection.authenticate_cookie(c, secret)
            c._post_authentication()  # what stem.connection.authenticate does after success
        else:
            c.authenticate()
        pi = c.get_protocolinfo()
        out["methods"] = sorted(str(m) for m in pi.auth_methods)
        out["cookiePath"] = pi.cookie_path
        out["version"] = str(c.get_version())
        out["phase0"] = c.get_info("status/bootstrap-phase")
        events = []
        done = threading.Event()
        def on_event(event):
            events.append({"action": event.action, "runlevel": str(event.runlevel),
                           "arguments": event.keyword_args})
            if event.keyword_args.get("PROGRESS") == "100":
                done.set()
        c.add_event_listener(on_event, EventType.STATUS_CLIENT)
        c.set_conf("DisableNetwork", "0")
        done.wait(20)
        out["events"] = events
        out["phase1"] = c.get_info("status/bootstrap-phase")
    print(json.dumps(out))
    """

  struct StemResult: Decodable {
    struct Event: Decodable {
      let action: String
      let runlevel: String
      let arguments: [String: String]
    }
    let methods: [String]
    let cookiePath: String?
    let version: String
    let phase0: String
    let events: [Event]
    let phase1: String
  }

  static func runStem(port: UInt16, mode: String, secret: String) throws -> StemResult {
    let script = FileManager.default.temporaryDirectory.appendingPathComponent(
      "failclosed-stem-\(getpid())-\(port).py")
    try stemScript.write(to: script, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: script) }
    let run = try runProcess(
      python, [script.path, String(port), mode, secret], deadline: 40)
    guard run.status == 0, let data = run.stdout.data(using: .utf8) else {
      throw StemFailure(message: "stem exited \(run.status): \(run.stderr.suffix(2000))")
    }
    return try JSONDecoder().decode(StemResult.self, from: data)
  }

  struct StemFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
  }

  /// Starts a ctor control port whose healthy bootstrap takes one real second once the
  /// controller clears DisableNetwork.
  static func scaledPort(auth: ControlAuthentication, recorder: DriverRecorder) throws -> (
    BootstrapDriver, ControlPortListener
  ) {
    let driver = BootstrapDriver(
      simulator: BootstrapSimulator(plan: .healthy(after: 17), personality: .ctor),
      clock: ScaledClock(factor: 17), disableNetwork: true,
      socksListeners: ["127.0.0.1:39050"], hooks: recorder.hooks)
    let listener = try ControlPortListener(
      address: SocketAddress("127.0.0.1:0")!, authentication: auth, backend: driver)
    driver.attach(listener)
    listener.start()
    driver.start()
    return (driver, listener)
  }

  static func checkBootstrapEvents(_ result: StemResult) {
    #expect(result.phase0 == "NOTICE BOOTSTRAP PROGRESS=0 TAG=starting SUMMARY=\"Starting\"")
    #expect(result.phase1 == "NOTICE BOOTSTRAP PROGRESS=100 TAG=done SUMMARY=\"Done\"")
    #expect(result.version.hasPrefix("0.4.9.11"))
    let bootstrap = result.events.filter { $0.action == "BOOTSTRAP" }
    #expect(bootstrap.allSatisfy { $0.runlevel == "NOTICE" })
    // Subscribed while DisableNetwork froze the plan at 0%: every later phase arrives in order.
    #expect(
      bootstrap.compactMap { $0.arguments["TAG"] }
        == BootstrapPhase.direct.dropFirst().map(\.tag))
    #expect(bootstrap.last?.arguments["SUMMARY"] == "Done")
    #expect(result.events.contains { $0.action == "CIRCUIT_ESTABLISHED" })
  }

  @Test(
    .needs("needs Debian's python3-stem", if: haveStem))
  func stemWithPassword() throws {
    try #require(Self.haveStem, "needs Debian's python3-stem")
    let recorder = DriverRecorder()
    let (driver, listener) = try Self.scaledPort(
      auth: ControlAuthentication(password: "s3cret pw"), recorder: recorder)
    defer {
      driver.stop()
      listener.stop()
    }
    let result = try Self.runStem(
      port: listener.address.port, mode: "password", secret: "s3cret pw")
    #expect(result.methods == ["Password"])
    Self.checkBootstrapEvents(result)
    #expect(recorder.network == [false])
    #expect(recorder.commands.contains("SETCONF DisableNetwork=\"0\""))
    #expect(
      recorder.commands.contains { $0.hasPrefix("SETEVENTS") && $0.contains("STATUS_CLIENT") })
  }

  @Test(
    .needs("needs Debian's python3-stem", if: haveStem))
  func stemWithSafeCookieAndCookie() throws {
    try #require(Self.haveStem, "needs Debian's python3-stem")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "failclosed-cookie-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let cookiePath = directory.appendingPathComponent("control_auth_cookie").path
    let auth = try ControlPortCookie.authentication(for: .cookieFile(cookiePath))
    #expect(try Data(contentsOf: URL(fileURLWithPath: cookiePath)).count == 32)
    for mode in ["auto", "cookie"] {
      let recorder = DriverRecorder()
      let (driver, listener) = try Self.scaledPort(auth: auth, recorder: recorder)
      defer {
        driver.stop()
        listener.stop()
      }
      let result = try Self.runStem(port: listener.address.port, mode: mode, secret: cookiePath)
      #expect(result.methods == ["Cookie", "Safecookie"])
      #expect(result.cookiePath == cookiePath)
      Self.checkBootstrapEvents(result)
      // stem prefers SAFECOOKIE when offered; authenticate_cookie sends the cookie itself.
      let sawChallenge = recorder.commands.contains { $0.hasPrefix("AUTHCHALLENGE") }
      #expect(sawChallenge == (mode == "auto"))
    }
  }

  // MARK: - Differential against Debian's tor

  /// A tor with DisableNetwork 1 (it opens no connection beyond its control port), killed at
  /// the end. Returns nil when tor is not installed.
  final class RealTor {
    let process = Process()
    let directory: URL
    let controlPort: UInt16
    var cookiePath: String { directory.appendingPathComponent("data/control_auth_cookie").path }

    init() throws {
      directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "failclosed-realtor-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
      let data = directory.appendingPathComponent("data")
      try FileManager.default.createDirectory(
        at: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      controlPort = try freeLoopbackPort()
      // Pinned as well (a loopback bridge that refuses): DisableNetwork alone would leave
      // tor one SETCONF away from the public network.
      let torrc = """
        DisableNetwork 1
        UseBridges 1
        Bridge 127.0.0.1:1
        SocksPort 0
        ControlPort 127.0.0.1:\(controlPort)
        CookieAuthentication 1
        DataDirectory \(data.path)
        Log notice file \(directory.appendingPathComponent("notice.log").path)
        RunAsDaemon 0

        """
      let torrcPath = directory.appendingPathComponent("torrc")
      try torrc.write(to: torrcPath, atomically: true, encoding: .utf8)
      process.executableURL = URL(fileURLWithPath: ControlPortRealClientTests.tor)
      process.arguments = ["-f", torrcPath.path, "--quiet"]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
    }

    /// Waits (bounded) until the control port accepts a connection and the cookie exists.
    func waitUntilReady() -> Bool {
      var ready = false
      _ = waitUntil(timeout: 20, every: 0.1) {
        if FileManager.default.fileExists(atPath: cookiePath),
          let probe = try? Socket.connect(
            to: SocketAddress("127.0.0.1:\(controlPort)")!, timeout: 0.2)
        {
          probe.close()
          ready = true
        }
        return ready || !process.isRunning
      }
      return ready
    }

    /// SIGKILL: children of the test process inherit a signal mask that blocks SIGTERM.
    func stop() {
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
      }
      try? FileManager.default.removeItem(at: directory)
    }
  }

  /// The exchanges compared: (commands sent first, the probed command). None of them changes
  /// tor's configuration (never SETCONF on the real tor: DisableNetwork must stay 1).
  static let differentialCases: [(setup: [String], probe: String)] = [
    ([], "PROTOCOLINFO 1\r\n"),
    ([], "GETINFO version\r\n"),
    ([], "FOO\r\n"),
    ([], "AUTHENTICATE \"wrong\"\r\n"),
    ([], "AUTHENTICATE 00112233\r\n"),
    ([], "AUTHENTICATE \(String(repeating: "00", count: 32))\r\n"),
    ([], "AUTHENTICATE secret\r\n"),
    ([], "AUTHCHALLENGE FOO 00\r\n"),
    ([], "GET / HTTP/1.0\r\n\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "FOO bar\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "GETINFO nosuch/key\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "GETINFO version nosuch other\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "SIGNAL BOGUS\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "SIGNAL\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "SIGNAL NEWNYM HUP\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "SETEVENTS STATUS_CLIENT BOGUS\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "SETEVENTS STATUS_CLIENT\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "GETCONF DisableNetwork\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "GETCONF Bogus\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "SETCONF Bogus=1\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "GETINFO status/bootstrap-phase\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "PROTOCOLINFO\r\n"),
    (["AUTHENTICATE COOKIE\r\n"], "QUIT\r\n"),
  ]

  /// Replaces what legitimately differs: the cookie file's path and tor's version number.
  static func normalize(_ reply: String, cookiePath: String) -> String {
    let text = reply.replacingOccurrences(of: cookiePath, with: "<cookie>")
    let version = try! NSRegularExpression(pattern: "0\\.[0-9]+\\.[0-9]+\\.[0-9]+[^\"\\r]*")
    return version.stringByReplacingMatches(
      in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "<version>")
  }

  static func transcript(
    port: UInt16, cookie: [UInt8], setup: [String], probe: String
  ) throws -> (reply: String, closed: Bool) {
    let client = try ControlTestClient(port: port)
    let hex = ControlArguments.encodeHex(cookie)
    for line in setup {
      _ = try client.exchange(line.replacingOccurrences(of: "COOKIE", with: hex), closeWait: 0.05)
    }
    if probe.hasPrefix("GET ") { return try client.exchangeUntilClose(probe) }
    return try client.exchange(probe, closeWait: 0.25)
  }

  @Test(
    .needs("needs Debian's tor", if: FileManager.default.isExecutableFile(atPath: tor)))
  func repliesHaveTheFormOfRealTors() throws {
    try #require(FileManager.default.isExecutableFile(atPath: Self.tor), "needs Debian's tor")
    let real = try RealTor()
    defer { real.stop() }
    try #require(real.waitUntilReady(), "tor did not open its control port")
    let realCookie = try [UInt8](Data(contentsOf: URL(fileURLWithPath: real.cookiePath)))

    let mockDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "failclosed-mockcookie-\(getpid())")
    try FileManager.default.createDirectory(at: mockDirectory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: mockDirectory) }
    let mockCookiePath = mockDirectory.appendingPathComponent("control_auth_cookie").path
    let auth = try ControlPortCookie.authentication(for: .cookieFile(mockCookiePath))
    let driver = BootstrapDriver(
      simulator: BootstrapSimulator(plan: .healthy(after: 5), personality: .ctor),
      clock: ManualClock(), disableNetwork: true)
    driver.advance()
    let listener = try ControlPortListener(
      address: SocketAddress("127.0.0.1:0")!, authentication: auth, backend: driver)
    driver.attach(listener)
    listener.start()
    defer { listener.stop() }

    for (setup, probe) in Self.differentialCases {
      let fromTor = try Self.transcript(
        port: real.controlPort, cookie: realCookie, setup: setup, probe: probe)
      let fromMock = try Self.transcript(
        port: listener.address.port, cookie: auth.cookie!, setup: setup, probe: probe)
      let expected = Self.normalize(fromTor.reply, cookiePath: real.cookiePath)
      var actual = Self.normalize(fromMock.reply, cookiePath: mockCookiePath)
      if probe.hasPrefix("GET ") {
        // The mock sends tor's status line and headers with a shorter page.
        let head = "HTTP/1.0 501 Tor ControlPort is not an HTTP proxy\r\n"
        #expect(expected.hasPrefix(head) && actual.hasPrefix(head), "\(probe)")
        actual = expected
      }
      #expect(actual == expected, "reply to \(probe.debugDescription) after \(setup)")
      #expect(fromMock.closed == fromTor.closed, "close after \(probe.debugDescription)")
    }
  }
}

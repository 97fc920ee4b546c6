import FailClosedSupport
import Foundation
import Glibc
import Testing
import TorControl

@testable import MockTor

/// Hostile and careless local users against the mock's control port: its cookie file, a flood
/// of idle strangers, an endless line, a burst of pipelined commands, a flooded event log.
@Suite struct ControlPortHardeningTests {
  static func temporaryDirectory(_ name: String) throws -> String {
    let path = NSTemporaryDirectory() + "fc-hardening-\(getpid())-\(name)-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    chmod(path, 0o700)
    return path
  }

  static func mode(_ path: String) -> mode_t {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o7777
  }

  static func makePort(
    auth: ControlAuthentication, maxUnauthenticated: Int = 32, authenticationTimeout: Double = 30
  ) throws -> ControlPortListener {
    let driver = BootstrapDriver(
      simulator: BootstrapSimulator(plan: .neverStarting, personality: .ctor), clock: ManualClock())
    let listener = try ControlPortListener(
      address: SocketAddress("127.0.0.1:0")!, authentication: auth, backend: driver,
      maxUnauthenticated: maxUnauthenticated, authenticationTimeout: authenticationTimeout)
    driver.attach(listener)
    listener.start()
    return listener
  }

  /// Found by an adversarial probe: the cookie was written world-readable, renamed, then
  /// chmodded, and another user could read it. Now the file is 0600 from its creation.
  @Test func theCookieFileIsPrivateFromItsCreation() throws {
    let directory = try Self.temporaryDirectory("cookie")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let probe = directory + "/probe"
    let fd = try ControlPortCookie.createPrivateFile(probe)
    var info = stat()
    #expect(fstat(fd, &info) == 0)
    close(fd)
    #expect(info.st_mode & 0o7777 == 0o600, "mode at creation, before any byte is written")
    // A second creation of the same name fails (O_EXCL): nobody else's file is reused.
    #expect(throws: ControlPortError.self) { _ = try ControlPortCookie.createPrivateFile(probe) }

    let path = directory + "/control_auth_cookie"
    let cookie = try ControlPortCookie.write(to: path)
    #expect(cookie.count == 32)
    #expect(Self.mode(path) == 0o600)
    #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == cookie)
    // No temporary file is left beside it.
    let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    #expect(names == ["control_auth_cookie", "probe"])
  }

  @Test func aLinkPlantedAtTheCookiePathIsReplacedNotFollowed() throws {
    let directory = try Self.temporaryDirectory("link")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let target = directory + "/victim"
    try Data("untouched".utf8).write(to: URL(fileURLWithPath: target))
    let path = directory + "/cookie"
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    _ = try ControlPortCookie.write(to: path)
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched")
    #expect(
      try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
        == .typeRegular)
    #expect(Self.mode(path) == 0o600)
  }

  @Test func aDirectoryOthersMayWriteIsRefusedUnlessSticky() throws {
    let directory = try Self.temporaryDirectory("open")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    chmod(directory, 0o777)
    #expect {
      _ = try ControlPortCookie.write(to: directory + "/cookie")
    } throws: { error in
      "\(error)".contains("is writable by other users (mode 777)")
    }
    #expect(!FileManager.default.fileExists(atPath: directory + "/cookie"))
    // The positive control: a sticky shared directory (like /tmp) is accepted.
    chmod(directory, 0o1777)
    _ = try ControlPortCookie.write(to: directory + "/cookie")
    #expect(Self.mode(directory + "/cookie") == 0o600)
    #expect {
      _ = try ControlPortCookie.write(to: directory + "/missing/cookie")
    } throws: { error in
      "\(error)".hasPrefix("control auth cookie file \(directory)/missing/cookie: its directory")
    }
  }

  /// Found by an adversarial probe: 256 idle unauthenticated connections filled every slot and
  /// locked the owner out for the 300 s idle timeout. Strangers are now bounded and the
  /// newest evicts the oldest, so the owner always gets in.
  @Test func idleStrangersCannotLockTheOwnerOut() throws {
    var cookie = [UInt8](repeating: 0, count: 32)
    for index in cookie.indices { cookie[index] = UInt8(index) }
    let listener = try Self.makePort(auth: ControlAuthentication(cookie: cookie))
    defer { listener.stop() }
    let port = listener.address.port
    var strangers: [Socket] = []
    defer { for socket in strangers { socket.close() } }
    for _ in 0..<256 {
      strangers.append(try Socket.connect(to: SocketAddress("127.0.0.1:\(port)")!, timeout: 5))
    }
    let owner = try ControlTestClient(port: port)
    var events: [ControlMessage] = []
    let hex = cookie.map { String(format: "%02x", $0) }.joined()
    #expect(try owner.command("AUTHENTICATE \(hex)\r\n", events: &events)?.code == 250)
    #expect(try owner.command("GETINFO version\r\n", events: &events)?.code == 250)
    #expect(listener.connectionCount <= listener.maxUnauthenticated + 1)
  }

  /// A stranger that keeps the line busy (a byte at a time) without authenticating is still
  /// closed at the authentication deadline.
  @Test func aDrippingStrangerIsClosedAtTheAuthenticationDeadline() throws {
    let listener = try Self.makePort(auth: .none, authenticationTimeout: 0.3)
    defer { listener.stop() }
    let socket = try Socket.connect(
      to: SocketAddress("127.0.0.1:\(listener.address.port)")!, timeout: 5)
    defer { socket.close() }
    socket.setTimeouts(seconds: 0.1)
    var closed = false
    // Bounded: 100 drips of 0.1 s at most; the deadline is 0.3 s.
    for _ in 0..<100 where !closed {
      if (try? socket.write(Array("A".utf8))) == nil {
        closed = true
        break
      }
      if let bytes = try? socket.read(), bytes.isEmpty { closed = true }
    }
    #expect(closed)
  }

  /// The control port survives a 1 MB line without a newline, then 500 pipelined commands.
  @Test func survivesAnEndlessLineAndPipelinedCommands() throws {
    let listener = try Self.makePort(auth: .none)
    defer { listener.stop() }
    let port = listener.address.port
    let flood = try Socket.connect(to: SocketAddress("127.0.0.1:\(port)")!, timeout: 5)
    defer { flood.close() }
    flood.setTimeouts(seconds: 5)
    // Written in chunks; the port refuses the line and closes the connection part way.
    var sent = 0
    let chunk = [UInt8](repeating: UInt8(ascii: "A"), count: 65_536)
    while sent < 1_048_576, (try? flood.write(chunk)) != nil { sent += chunk.count }
    var reply: [UInt8] = []
    while let bytes = try? flood.read(), !bytes.isEmpty { reply += bytes }
    #expect(String(decoding: reply, as: UTF8.self).hasPrefix("500 "))

    let client = try ControlTestClient(port: port)
    var events: [ControlMessage] = []
    #expect(try client.command("AUTHENTICATE\r\n", events: &events)?.code == 250)
    try client.send(String(repeating: "GETINFO version\r\n", count: 500))
    var answered = 0
    while answered < 500, let message = try client.next() {
      guard !message.isAsyncEvent else { continue }
      #expect(message.code == 250)
      answered += 1
    }
    #expect(answered == 500)
    #expect(try client.command("GETINFO version\r\n", events: &events)?.code == 250)
  }
}

/// Found by an adversarial probe: `--event-log` grew without bound under pipelined control
/// commands (84 MB from 300k). The file is now rotated to FILE.1 at a limit.
@Suite struct MockTorEventLogLimitTests {
  @Test func theFileIsRotatedAndMemoryIsARing() throws {
    let directory = try ControlPortHardeningTests.temporaryDirectory("log")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/mock.jsonl"
    let log = try MockTorEventLog(path: path, memoryLimit: 1000, fileLimit: 65_536)
    for index in 0..<20_000 {
      log.record("control", time: Double(index), ["line": .string("GETINFO version \(index)")])
    }
    let size = { (file: String) in
      (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? -1
    }
    #expect(size(path) <= 65_536)
    #expect(size(path + ".1") <= 65_536)
    #expect(size(path + ".1") > 60_000)
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    #expect(lines.first?.contains("\"event\":\"log_rotated\"") == true)
    #expect(lines.last?.contains("GETINFO version 19999") == true)
    let kept = log.events
    #expect(kept.count == 1000)
    #expect(kept.first?["line"] == .string("GETINFO version 19000"))
    #expect(kept.last?["line"] == .string("GETINFO version 19999"))
  }

  /// The positive control: a log under its limit is one file with every record.
  @Test func aSmallLogIsOneFile() throws {
    let directory = try ControlPortHardeningTests.temporaryDirectory("small")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/mock.jsonl"
    let log = try MockTorEventLog(path: path, fileLimit: 65_536)
    for index in 0..<10 { log.record("socks", time: Double(index)) }
    #expect(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count == 10)
    #expect(!FileManager.default.fileExists(atPath: path + ".1"))
  }
}

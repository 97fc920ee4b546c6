import FailClosedSupport
import Foundation
import MockTor
import TestSupport
import Testing

/// The same malformed and unsupported requests to Debian's tor and to the ctor mock must get
/// the same bytes back (and the same close). Tor runs with its own DataDirectory and a single
/// bridge at 127.0.0.1:1, so it never contacts anything but loopback (DisableNetwork 1 would
/// keep its SOCKS port closed). It exits by itself if this test process dies before killing it.
@Suite(.serialized) struct TorDifferentialTests {
  static let greeting: [UInt8] = [0x05, 0x01, 0x00]
  static func request(_ command: UInt8, _ rest: [UInt8]) -> [UInt8] {
    [0x05, command, 0x00] + rest
  }
  static let name: [UInt8] = [0x03, 0x0B] + Array("example.com".utf8)

  /// (name, steps). Each step is sent after the previous step's reply has arrived.
  static let cases: [(String, [[UInt8]])] = [
    ("HTTP GET", [Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)]),
    ("HTTP CONNECT", [Array("CONNECT example.com:443 HTTP/1.1\r\n\r\n".utf8)]),
    ("HTTP POST", [Array("POST / HTTP/1.1\r\n\r\n".utf8)]),
    ("version 6", [[0x06, 0x01, 0x00]]),
    ("version 0", [[0x00, 0x01, 0x00]]),
    ("no methods", [[0x05, 0x00]]),
    ("GSSAPI only", [[0x05, 0x01, 0x01]]),
    ("no-auth and user/pass", [[0x05, 0x02, 0x00, 0x02]]),
    ("BIND", [greeting, request(0x02, [0x01, 8, 8, 8, 8, 0, 80])]),
    ("UDP ASSOCIATE", [greeting, request(0x03, [0x01, 8, 8, 8, 8, 0, 80])]),
    ("command 9", [greeting, request(0x09, [0x01, 8, 8, 8, 8, 0, 80])]),
    ("address type 5", [greeting, request(0x01, [0x05, 8, 8, 8, 8, 0, 80])]),
    ("reserved byte 1", [greeting, [0x05, 0x01, 0x01, 0x01, 8, 8, 8, 8, 0, 80]]),
    ("zero-length name", [greeting, request(0x01, [0x03, 0x00, 0, 80])]),
    ("non-UTF-8 name", [greeting, request(0x01, [0x03, 0x03, 0xFF, 0xFE, 0x80, 0, 80])]),
    ("name with space", [greeting, request(0x01, [0x03, 0x03, 0x61, 0x20, 0x62, 0, 80])]),
    ("leading hyphen", [greeting, request(0x01, [0x03, 0x02, 0x2D, 0x61, 0, 80])]),
    ("empty label", [greeting, request(0x01, [0x03, 0x03, 0x61, 0x2E, 0x2E, 0, 80])]),
    ("port 0", [greeting, request(0x01, name + [0, 0])]),
    ("RESOLVE_PTR by name", [greeting, request(0xF1, name + [0, 0])]),
    ("RESOLVE an IP literal", [greeting, request(0xF0, [0x01, 8, 8, 8, 8, 0, 0])]),
    ("auth version 2", [[0x05, 0x01, 0x02], [0x02, 0x01, 0x75, 0x01, 0x70]]),
    (
      "<torS0X> alone",
      [[0x05, 0x01, 0x02], [0x01, 0x08] + Array("<torS0X>".utf8) + [0x01, 0x70]]
    ),
    ("<torS0X>9", [[0x05, 0x01, 0x02], [0x01, 0x09] + Array("<torS0X>9".utf8) + [0x01, 0x70]]),
    (
      "<torS0X>1 RPC id",
      [[0x05, 0x01, 0x02], [0x01, 0x0A] + Array("<torS0X>1a".utf8) + [0x01, 0x70]]
    ),
    ("SOCKS4 BIND", [[0x04, 0x02, 0x00, 0x50, 8, 8, 8, 8, 0]]),
    ("SOCKS4 command 9", [[0x04, 0x09, 0x00, 0x50, 8, 8, 8, 8, 0]]),
    ("SOCKS4 RESOLVE_PTR", [[0x04, 0xF1, 0x00, 0x00, 8, 8, 8, 8, 0]]),
    ("SOCKS4 port 0", [[0x04, 0x01, 0x00, 0x00, 8, 8, 8, 8, 0]]),
    (
      "SOCKS4a 256-byte name",
      [[0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0] + [UInt8](repeating: 0x61, count: 256) + [0]]
    ),
    (
      "SOCKS4 unterminated user id",
      [[0x04, 0x01, 0x00, 0x50, 8, 8, 8, 8] + [UInt8](repeating: 0x75, count: 3000)]
    ),
  ]

  @Test func malformedRequestsGetTorsBytes() async throws {
    let port = try freeLoopbackPort()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "failclosed-tor-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let torrc = """
      SocksPort 127.0.0.1:\(port)
      DataDirectory \(directory.path)/data
      UseBridges 1
      Bridge 127.0.0.1:1
      ClientUseIPv6 0
      __OwningControllerProcess \(getpid())
      RunAsDaemon 0
      Log notice file \(directory.path)/notice.log
      """
    try torrc.write(
      to: directory.appendingPathComponent("torrc"), atomically: true, encoding: .utf8)
    let tor = try ChildProcess(
      "/usr/bin/tor", ["-f", directory.appendingPathComponent("torrc").path])
    defer { tor.stop() }
    let torAddress = SocketAddress(bytes: [127, 0, 0, 1], port: port)!
    let up = await waitUntil(timeout: 20) {
      (try? Socket.connect(to: torAddress, timeout: 1)) != nil
    }
    try #require(up, "tor's SOCKS port did not open")

    let mock = try makeMock(.ctor)
    defer { mock.stop() }
    let mockAddress = try #require(mock.waitForListener())

    let results = try await BlockingIO.run("test.differential") {
      try Self.cases.map { name, steps in
        (name, try probe(torAddress, steps: steps), try probe(mockAddress, steps: steps))
      }
    }
    for (name, fromTor, fromMock) in results {
      #expect(fromMock == fromTor, "\(name): tor \(fromTor), mock \(fromMock)")
    }
  }
}

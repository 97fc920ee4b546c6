import FailClosedSupport
import Foundation
import MockTor
import Testing

/// Real SOCKS clients (Debian's curl and torsocks) through the mock to a local HTTP server.
@Suite(.serialized) struct RealClientTests {
  @Test func curlSOCKS5HostnameSendsTheName() async throws {
    let web = try TinyHTTPServer()
    defer { web.stop() }
    var map = DestinationMap()
    map.add("web.failclosed.test", SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
    let mock = try makeMock(destinations: map)
    defer { mock.stop() }
    let proxy = try #require(mock.waitForListener())
    let result = try await runProgram(
      "/usr/bin/curl",
      [
        "-sS", "--max-time", "10", "--socks5-hostname", proxy.description,
        "http://web.failclosed.test/",
      ])
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output == web.body)
    mock.stop()
    let record = try #require(mock.eventLog.events("socks").first)
    #expect(record["destination"] == "web.failclosed.test")
    #expect(record["raw_ip"] == false)
    #expect(record["command"] == "CONNECT")
    #expect(record["outcome"]?.stringValue?.contains("closed") == true)
    #expect((record["bytes_down"]?.intValue ?? 0) > web.body.utf8.count)
    #expect((record["bytes_up"]?.intValue ?? 0) > 0)
  }

  @Test func curlSOCKS5ResolvesLocallyAndTheLogShowsTheRawIP() async throws {
    let web = try TinyHTTPServer()
    defer { web.stop() }
    let mock = try makeMock()
    defer { mock.stop() }
    let proxy = try #require(mock.waitForListener())
    let result = try await runProgram(
      "/usr/bin/curl",
      [
        "-4", "-sS", "--max-time", "10", "--socks5", proxy.description,
        "http://localhost:\(web.port)/",
      ])
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output == web.body)
    mock.stop()
    let record = try #require(mock.eventLog.events("socks").first)
    #expect(record["destination"] == "127.0.0.1")
    #expect(record["raw_ip"] == true)
  }

  @Test func torsocksResolvesThroughTheMock() async throws {
    let web = try TinyHTTPServer()
    defer { web.stop() }
    var map = DestinationMap()
    map.add("web.failclosed.test", SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
    let mock = try makeMock(destinations: map)
    defer { mock.stop() }
    let proxy = try #require(mock.waitForListener())
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "torsocks-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let conf = directory.appendingPathComponent("torsocks.conf")
    try "TorAddress 127.0.0.1\nTorPort \(proxy.port)\n".write(
      to: conf, atomically: true, encoding: .utf8)
    var environment = ProcessInfo.processInfo.environment
    environment["TORSOCKS_CONF_FILE"] = conf.path
    let result = try await runProgram(
      "/usr/bin/torsocks",
      ["/usr/bin/curl", "-sS", "--max-time", "10", "http://web.failclosed.test/"],
      environment: environment)
    #expect(result.status == 0, "\(result.error)")
    #expect(result.output == web.body)
    mock.stop()
    let records = mock.eventLog.events("socks")
    let resolve = try #require(records.first { $0["command"] == "RESOLVE" })
    #expect(resolve["destination"] == "web.failclosed.test")
    #expect(resolve["raw_ip"] == false)
    // torsocks then connects to the answer, an IP literal in a domain field, which the mock
    // maps back (a virtual address only the mock knows).
    let connect = try #require(records.first { $0["command"] == "CONNECT" })
    #expect(connect["raw_ip"] == true)
    #expect(connect["address_type"] == "domain")
    #expect(connect["destination"] == resolve["answer"])
  }
}

import FailClosedSupport
import Foundation
import Testing

@testable import Testnet

/// Brings up a real private Tor network of Debian's tor on loopback, bootstraps a client
/// directly and another only through the obfs4 bridge, fetches through the exit, and checks
/// that nothing is left running.
@Suite(.serialized) struct PrivateNetworkTests {
  @Test func networkClientAndBridgeClientBootstrapAndFetch() async throws {
    let base =
      NSTemporaryDirectory() + "failclosed-testnet-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: base) }
    let network = TorNetwork(plan: .loopback(basePort: 27000), directory: base + "/net")
    defer { network.stop() }
    try network.prepare()
    try network.start()
    let consensus = try await network.waitUntilReady(timeout: 90)
    #expect(consensus.routers.count == 5)
    let allowlist = try network.allowlist()
    #expect(allowlist.contains("127.0.0.1:27011"))  // the exit's ORPort
    #expect(allowlist.contains("127.0.0.1:27041"))  // the bridge's obfs4 port

    let server = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let serverPort = server.localAddress!.port
    BlockingIO.detach("testnet.http") {
      while let (client, _) = try? server.accept() {
        _ = try? client.read()
        try? client.write(Array("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        client.close()
      }
    }
    defer { server.close() }

    let client = try TorClientProcess(
      torrc: network.builder.client(
        dataDirectory: base + "/client", socksPort: 27050, controlPort: 27051),
      dataDirectory: base + "/client")
    defer { client.stop() }
    _ = try await client.waitForBootstrap(timeout: 60)
    #expect(client.bootstrap.last?.tag == "done")
    // 100% does not guarantee a usable exit at once: retry, bounded.
    var body = ""
    for _ in 0..<20 where body != "ok" {
      body =
        (try? ToolRunner.run([
          "curl", "-s", "-m", "5", "--socks5-hostname", "127.0.0.1:27050",
          "http://127.0.0.1:\(serverPort)/",
        ])) ?? ""
      if body != "ok" { try await Task.sleep(nanoseconds: 500_000_000) }
    }
    #expect(body == "ok")

    let bridge = try #require(try network.bridgeLine())
    let bridged = try TorClientProcess(
      torrc: network.builder.client(
        dataDirectory: base + "/bridged", socksPort: 27060, controlPort: 27061, bridges: [bridge]),
      dataDirectory: base + "/bridged")
    defer { bridged.stop() }
    _ = try await bridged.waitForBootstrap(timeout: 60)
    #expect(bridged.bootstrap.contains { $0.tag.hasSuffix("_pt") })

    let pids = Array(network.pids.values) + [client.pid, bridged.pid]
    network.stop()
    client.stop()
    bridged.stop()
    for pid in pids { #expect(kill(pid, 0) != 0, "tor \(pid) still running") }
  }
}

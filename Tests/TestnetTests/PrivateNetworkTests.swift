import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Testnet

/// Brings up a real private Tor network of Debian's tor on the loopback of a namespace of the
/// test's own (nothing binds the host's), bootstraps a client directly and another only
/// through the obfs4 bridge, fetches through the exit, and checks that nothing is left
/// running or listening. The test process owns the network's tors: if it dies, they end too.
@Suite(
  .serialized,
  .needsRoot(because: "a network namespace of its own"))
struct PrivateNetworkTests {
  @Test func networkClientAndBridgeClientBootstrapAndFetch() async throws {
    let namespace = try TestNamespace("net")
    defer { namespace.remove() }
    let base =
      NSTemporaryDirectory() + "failclosed-testnet-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: base) }
    let network = TorNetwork(
      plan: .loopback(basePort: 27000), directory: base + "/net", prefix: namespace.exec,
      owner: getpid())
    defer { network.stop() }
    try network.prepare()
    try network.start()
    let consensus = try await network.waitUntilReady(timeout: 90)
    #expect(consensus.routers.count == 5)
    let allowlist = try network.allowlist()
    #expect(allowlist.contains("127.0.0.1:27011"))  // the exit's ORPort
    #expect(allowlist.contains("127.0.0.1:27041"))  // the bridge's obfs4 port

    // The exit's destination, in the namespace: its loopback is the exit's.
    let server = try namespace.perform { try Socket.listen(on: SocketAddress("127.0.0.1:0")!) }
    let serverPort = server.localAddress!.port
    // Closed by its own thread once told to stop (a close from another thread would not end
    // an accept in progress, and the socket would stay listening).
    let serving = Serving()
    BlockingIO.detach("testnet.http") {
      defer { serving.finished() }
      while !serving.isStopping {
        guard let ready = try? server.poll(.readable, timeout: 0.1) else { break }
        guard !ready.isEmpty, let (client, _) = try? server.accept() else { continue }
        _ = try? client.read()
        try? client.write(Array("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8))
        client.close()
      }
      server.close()
    }
    defer { serving.stop() }

    let client = try TorClientProcess(
      torrc: network.builder.client(
        dataDirectory: base + "/client", socksPort: 27050, controlPort: 27051),
      dataDirectory: base + "/client", prefix: namespace.exec)
    defer { client.stop() }
    _ = try await client.waitForBootstrap(timeout: 60)
    #expect(client.bootstrap.last?.tag == "done")
    // 100% does not guarantee a usable exit at once: retry, bounded.
    var body = ""
    for _ in 0..<20 where body != "ok" {
      body =
        (try? ToolRunner.run(
          [
            "curl", "-s", "-m", "5", "--socks5-hostname", "127.0.0.1:27050",
            "http://127.0.0.1:\(serverPort)/",
          ], prefix: namespace.exec)) ?? ""
      if body != "ok" { try await Task.sleep(nanoseconds: 500_000_000) }
    }
    #expect(body == "ok")

    let bridge = try #require(try network.bridgeLine())
    let bridged = try TorClientProcess(
      torrc: network.builder.client(
        dataDirectory: base + "/bridged", socksPort: 27060, controlPort: 27061, bridges: [bridge]),
      dataDirectory: base + "/bridged", prefix: namespace.exec)
    defer { bridged.stop() }
    _ = try await bridged.waitForBootstrap(timeout: 60)
    #expect(bridged.bootstrap.contains { $0.tag.hasSuffix("_pt") })

    let pids = Array(network.pids.values) + [client.pid, bridged.pid]
    network.stop()
    client.stop()
    bridged.stop()
    for pid in pids { #expect(kill(pid, 0) != 0, "tor \(pid) still running") }
    serving.stop()
    let listening = try namespace.listeners()
    #expect(listening.isEmpty, "still listening: \(listening)")
  }
}

/// Tells a server thread to stop and waits until it has closed its socket.
private final class Serving: @unchecked Sendable {
  private let lock = NSLock()
  private var stopping = false
  private let done = DispatchSemaphore(value: 0)

  var isStopping: Bool { lock.withLock { stopping } }
  func finished() { done.signal() }

  /// Once: later calls return at once.
  func stop() {
    let first = lock.withLock {
      defer { stopping = true }
      return !stopping
    }
    if first { done.wait() }
  }
}

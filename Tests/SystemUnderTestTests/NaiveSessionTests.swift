import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import SystemUnderTest

/// The naive-port canary: Foundation's URLSession on Linux ignores bitchat's SOCKS dictionary
/// and connects straight to the destination. If this ever fails, the canary stops leaking
/// and the harness's detector must be re-checked against another canary.
@Suite struct NaiveSessionTests {
  @Test(.timeLimit(.minutes(1)))
  func ignoresTheSOCKSProxyAndConnectsDirect() async throws {
    let server = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    defer { server.close() }
    let port = server.localAddress!.port
    let deadProxy = try freeLoopbackPort()
    BlockingIO.detach("test.naive.server") {
      guard let (client, _) = try? server.accept() else { return }
      client.setTimeouts(seconds: 5)
      _ = try? client.read(max: 4096)
      _ = try? client.write(
        Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8))
      client.close()
    }
    let status = try await Self.fetch("http://127.0.0.1:\(port)/", proxyPort: deadProxy)
    // Had the SOCKS proxy (a closed port) been used, the request would have failed.
    #expect(status == 200)
  }

  @AppActor static func fetch(_ url: String, proxyPort: UInt16) async throws -> Int {
    let log = AppEventLog(clock: SystemClock())
    let session = NaiveURLSession(
      socksHost: "127.0.0.1", socksPort: Int(proxyPort), log: log, timeScale: 1)
    return await withCheckedContinuation { continuation in
      session.fetch(url, timeout: 10) { result in
        continuation.resume(returning: (try? result.get().status) ?? -1)
      }
    }
  }
}

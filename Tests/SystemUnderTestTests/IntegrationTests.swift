import FailClosedSupport
import Foundation
import MockTor
import TLS
import TestSupport
import Testing

@testable import SystemUnderTest

/// The modelled app against the real MockTor (arti personality, in process) over sockets on
/// 127.0.0.1, with an HTTPS/wss world server whose certificate comes from a test CA.
@Suite(.serialized) struct IntegrationTests {
  @AppActor final class Rig {
    let scheduler = ClockScheduler(clock: SystemClock())
    let log: AppEventLog
    let runtime: AppRuntime
    let socks: SocketAddress
    let directSessions = DirectSessionRecorder()

    init(world: LocalWorldServer, profile: SUTProfile = .bitchat) throws {
      log = AppEventLog(clock: scheduler.clock)
      let port = try freeLoopbackPort()
      let socks = SocketAddress(host: "127.0.0.1", port: port)!
      self.socks = socks
      let destinations = DestinationMap([
        "dir.test": world.address, "relay.test": world.address,
      ])
      let backend = InProcessArtiBackend(scheduler: scheduler) {
        MockTorConfiguration(
          personality: .arti, socksAddress: socks, bootstrapPlan: .healthy(after: 0.5),
          destinations: destinations)
      }
      let tls = try TLSClient(trust: .pem(world.authority.rootCertificatePEM))
      let log = self.log
      let recorder = directSessions
      var configuration = AppRuntime.Configuration(
        profile: profile, backend: backend, probe: SocketSocksProbe(log: log, timeScale: 1),
        makeTorSession: {
          StreamSession(
            connector: TorStreamConnector(socksEndpoint: socks, log: log), tls: tls, log: log,
            timeScale: 1)
        },
        makeDirectSession: { recorder.make() }, store: KeyValueStore(),
        directoryURL: "https://dir.test/relays/online_relays_gps.csv")
      configuration.builtInRelays = ["wss://relay.test"]
      configuration.socksPort = port
      runtime = AppRuntime(configuration: configuration, scheduler: scheduler, log: log)
    }

    func shutdown() async {
      runtime.activation.setLocationPermission(authorized: false)
      _ = await waitUntil(timeout: 5) { !runtime.tor.isReady && runtime.tor.bootstrapProgress == 0 }
    }
  }

  @AppActor final class DirectSessionRecorder {
    var sessions: [FakeSession] = []
    func make() -> FakeSession {
      let session = FakeSession(route: .direct)
      sessions.append(session)
      return session
    }
    var requests: [String] { sessions.flatMap(\.requestedURLs) }
  }

  @Test(.timeLimit(.minutes(1)))
  @AppActor func everythingGoesThroughTheSOCKSPortAndArrives() async throws {
    let world = try LocalWorldServer(names: ["dir.test", "relay.test"])
    defer { world.stop() }
    let rig = try Rig(world: world)
    rig.runtime.launch()
    rig.runtime.sendMessage("hello over tor")
    // Nothing may leave before readiness: no socket but probes until then.
    _ = await waitUntil(timeout: 20) {
      rig.runtime.directory.entries.count == 60
        && rig.log.events(.message).contains { $0["phase"] == "accepted" }
    }
    #expect(rig.runtime.tor.isReady)
    #expect(rig.runtime.directory.entries.count == 60)
    #expect(rig.log.events(.message).contains { $0["phase"] == "accepted" })
    #expect(world.messages.contains { $0.contains("hello over tor") })
    // By construction: every socket the Tor transport opened went to the SOCKS endpoint.
    let sockets = rig.log.events(.socket)
    #expect(!sockets.isEmpty)
    #expect(sockets.allSatisfy { $0["endpoint"]?.description == rig.socks.description })
    #expect(sockets.filter { $0["transport"] == "tor" }.count >= 2)
    #expect(rig.directSessions.requests.isEmpty)
    // The first tor socket opened after TorDidBecomeReady.
    let readyAt = rig.log.events(.notification).first { $0["name"] == "TorDidBecomeReady" }?.time
    let firstTor = sockets.first { $0["transport"] == "tor" }?.time
    #expect(readyAt != nil && firstTor != nil && firstTor! >= readyAt!)
    await rig.shutdown()
  }

  @Test func theTorConnectorSendsTheHostnameToTheProxy() async throws {
    // A SOCKS server that records the request: the name travels, nothing is resolved here.
    let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    defer { listener.close() }
    let address = listener.localAddress!
    let seen = try await BlockingIO.run { () -> [UInt8] in
      BlockingIO.detach("test.socks.client") {
        let log = AppEventLog(clock: SystemClock())
        _ = try? TorStreamConnector(socksEndpoint: address, log: log).open(
          host: "relay.example.invalid", port: 443, timeout: 2, purpose: "test")
      }
      let (client, _) = try listener.accept()
      defer { client.close() }
      client.setTimeouts(seconds: 2)
      let greeting = try client.read(max: 16)
      try client.write([0x05, 0x00])
      let request = try client.read(max: 512)
      try client.write([0x05, 0x04, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
      return greeting + request
    }
    #expect(Array(seen.prefix(3)) == [0x05, 0x01, 0x00])
    let request = Array(seen.dropFirst(3))
    #expect(Array(request.prefix(4)) == [0x05, 0x01, 0x00, 0x03])  // CONNECT, ATYP domain
    let name = String(decoding: request[5..<(5 + Int(request[4]))], as: UTF8.self)
    #expect(name == "relay.example.invalid")
  }
}

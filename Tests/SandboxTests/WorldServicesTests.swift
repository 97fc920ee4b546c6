import FailClosedSupport
import Foundation
import HTTPCodec
import TestSupport
import Testing

@testable import Sandbox

@Suite("World services")
struct WorldServicesTests {
  @Test(.needsRoot)
  func httpsAnswersAnyNameWithACertificateForIt() async throws {
    try await withSandbox { run in
      let world = try await BlockingIO.run { try run.startWorld() }
      let caPath = NSTemporaryDirectory() + "fc-ca-\(run.names.prefix).pem"
      defer { try? FileManager.default.removeItem(atPath: caPath) }
      try world.authority.writeRootCertificate(to: caPath)
      let output = try await BlockingIO.run {
        try CommandRunner.run([
          "ip", "netns", "exec", run.names.device, "curl", "-sS", "-m", "5", "--cacert", caPath,
          "https://relay.example.net/path",
        ])
      }
      #expect(output.stdout == "failclosed world: relay.example.net/path\n")
    }
  }

  @Test(.needsRoot)
  func csvPathsGetTheRelayDirectory() async throws {
    try await withSandbox { run in
      let world = try await BlockingIO.run { try run.startWorld() }
      let caPath = NSTemporaryDirectory() + "failclosed-ca-\(getpid())-csv.pem"
      defer { try? FileManager.default.removeItem(atPath: caPath) }
      try world.authority.writeRootCertificate(to: caPath)
      let output = try await BlockingIO.run {
        try CommandRunner.run([
          "ip", "netns", "exec", run.names.device, "curl", "-sS", "-m", "5", "--cacert", caPath,
          "-w", "%{content_type}",
          "https://raw.githubusercontent.com/permissionlesstech/bitchat/refs/heads/main/relays/online_relays_gps.csv",
        ])
      }
      #expect(output.stdout == WorldRelayDirectory.csv + "text/csv")
    }
  }

  @Test(.needsRoot)
  func webSocketsEchoMessages() async throws {
    try await withSandbox { run in
      _ = try await BlockingIO.run { try run.startWorld() }
      let target = SocketAddress(host: AddressPlan.webHostV4, port: 80)!
      let reply: [WebSocketMessage] = try await run.device.run {
        let socket = try Socket.connect(to: target, timeout: 2)
        socket.setTimeouts(seconds: 5)
        let key = WebSocketHandshake.key(nonce: Array(repeating: 7, count: 16))
        try socket.write(
          WebSocketHandshake.clientRequest(host: "relay.example", key: key).encoded())
        var parser = HTTPResponseParser()
        var upgraded: [UInt8] = []
        for _ in 0..<16 where !parser.isUpgraded {
          let bytes = try socket.read()
          if bytes.isEmpty { break }
          for case .head(let head) in try parser.parse(bytes) {
            try WebSocketHandshake.verifyServerResponse(head, key: key)
          }
        }
        upgraded = parser.takeUpgradedBytes()
        try socket.write(WebSocketFrame.text("hello").encoded(maskingKey: [1, 2, 3, 4]))
        var decoder = WebSocketMessageDecoder(role: .client)
        var messages = try decoder.parse(upgraded)
        for _ in 0..<16 where messages.isEmpty {
          messages += try decoder.parse(try socket.read())
        }
        return messages
      }
      #expect(reply == [.text("hello")])
    }
  }

  @Test(.needsRoot)
  func guardTunnelsReachWorldServicesByName() async throws {
    try await withSandbox { run in
      _ = try await BlockingIO.run { try run.startWorld() }
      let client = GuardTunnelClient(device: run.device)
      let reply: String = try await BlockingIO.run {
        let stream = try client.open(host: "directory.example.onion", port: 80)
        try stream.write(Array("GET /tor HTTP/1.1\r\nHost: directory.example.onion\r\n\r\n".utf8))
        var text = ""
        for _ in 0..<16 {
          let bytes = try stream.read()
          if bytes.isEmpty { break }
          text += String(decoding: bytes, as: UTF8.self)
        }
        return text
      }
      #expect(reply.hasSuffix("failclosed world: directory.example.onion/tor\n"))
    }
  }

  @Test func tunnelRequestsRoundTripAndBadOnesNameTheByte() throws {
    let request = GuardTunnel.Request(host: "example.org", port: 443)
    let bytes = GuardTunnel.encode(request)
    let decoded = try #require(try GuardTunnel.decode(bytes + [9, 9]))
    #expect(decoded.0 == request)
    #expect(decoded.1 == bytes.count)
    #expect(try GuardTunnel.decode(Array(bytes.prefix(6))) == nil)
    #expect(throws: GuardTunnel.ParseError(offset: 1, message: "expected magic \"FCT1\"")) {
      _ = try GuardTunnel.decode(Array("FXT1".utf8))
    }
  }

  @Test func dnsAnswersCarryTheAddress() throws {
    let query = DNSMessage.query(id: 42, name: "Example.ORG", type: DNSQuestion.typeAAAA)
    let parsed = try DNSMessage.parseQuery(query)
    #expect(parsed.question == DNSQuestion(name: "example.org", type: DNSQuestion.typeAAAA))
    let address = try #require(SocketAddress.parseIP(AddressPlan.webHostV6))
    let answer = try DNSMessage.answer(to: query, address: address)
    #expect(DNSMessage.answerAddresses(answer) == [address])
    #expect(throws: DNSParseError.self) { _ = try DNSMessage.parseQuery([0, 1, 2]) }
  }
}

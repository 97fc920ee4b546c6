import SOCKS
import Testing

/// Feeds the server's bytes to a client handshake and returns what the client sent and the
/// final outcome.
func runClient(_ client: inout SOCKSClientHandshake, serverBytes: [UInt8]) -> (
  sent: [UInt8], outcome: SOCKSClientAction.Outcome
) {
  var sent = client.greeting()
  var buffer = serverBytes
  for _ in 0..<16 {
    let action = client.handle(buffer)
    buffer.removeFirst(action.consumed)
    sent += action.send
    if action.outcome != .continueHandshake { return (sent, action.outcome) }
  }
  return (sent, .needMoreInput)
}

@Suite struct SOCKSClientHandshakeTests {
  @Test func connectByHostnameWithoutAuth() throws {
    var client = try SOCKSClientHandshake(target: .hostname("example.com"), port: 443)
    let (sent, outcome) = runClient(&client, serverBytes: [0x05, 0x00] + socks5Reply(0x00))
    #expect(
      sent == [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0x0B] + bytes("example.com") + [
        0x01, 0xBB,
      ])
    #expect(
      outcome
        == .finished(
          SOCKSClientReply(code: .succeeded, boundAddress: .ipv4([0, 0, 0, 0]), boundPort: 0)))
  }

  @Test func usernamePasswordCarriesIsolation() throws {
    var client = try SOCKSClientHandshake(
      target: .hostname("a"), port: 80,
      credentials: .usernamePassword(username: bytes("<torS0X>0"), password: bytes("k")))
    let (sent, outcome) = runClient(
      &client, serverBytes: [0x05, 0x02, 0x01, 0x00] + socks5Reply(0x00))
    #expect(
      sent == [0x05, 0x01, 0x02, 0x01, 0x09] + bytes("<torS0X>0") + [0x01, 0x6B] + [
        0x05, 0x01, 0x00, 0x03, 0x01, 0x61, 0x00, 0x50,
      ])
    #expect(outcome.isFinished)
  }

  @Test func boundAddressesOfEveryType() throws {
    let v6 = [UInt8](repeating: 0, count: 15) + [1]
    let replies: [([UInt8], SOCKSAddress, UInt16)] = [
      ([0x05, 0x00, 0x00, 0x01, 10, 0, 0, 1, 0x1F, 0x90], .ipv4([10, 0, 0, 1]), 8080),
      ([0x05, 0x00, 0x00, 0x04] + v6 + [0, 80], .ipv6(v6), 80),
      ([0x05, 0x00, 0x00, 0x03, 0x02, 0x61, 0x62, 0, 1], .hostname("ab"), 1),
    ]
    for (reply, address, port) in replies {
      var client = try SOCKSClientHandshake(target: .hostname("a"), port: 80, command: .resolve)
      let (_, outcome) = runClient(&client, serverBytes: [0x05, 0x00] + reply)
      #expect(
        outcome
          == .finished(SOCKSClientReply(code: .succeeded, boundAddress: address, boundPort: port)))
    }
  }

  @Test func replyCodesBecomeErrors() throws {
    for code in SOCKSReplyCode.allCases where code != .succeeded {
      var client = try SOCKSClientHandshake(target: .hostname("a"), port: 80)
      let (_, outcome) = runClient(&client, serverBytes: [0x05, 0x00] + socks5Reply(code.rawValue))
      #expect(outcome == .failed(SOCKSError(.rejected(code), at: 3)))
    }
    var client = try SOCKSClientHandshake(target: .hostname("a"), port: 80)
    #expect(
      runClient(&client, serverBytes: [0x05, 0x00] + socks5Reply(0x09)).outcome
        == .failed(SOCKSError(.unknownReplyCode(9), at: 3)))
  }

  @Test func methodAndAuthFailures() throws {
    var noMethod = try SOCKSClientHandshake(target: .hostname("a"), port: 80)
    #expect(
      runClient(&noMethod, serverBytes: [0x05, 0xFF]).outcome
        == .failed(SOCKSError(.noAcceptableMethod([0xFF]), at: 1)))
    var unoffered = try SOCKSClientHandshake(target: .hostname("a"), port: 80)
    #expect(runClient(&unoffered, serverBytes: [0x05, 0x02]).outcome.isFailed)
    var badAuth = try SOCKSClientHandshake(
      target: .hostname("a"), port: 80, credentials: .usernamePassword(username: [1], password: [2])
    )
    #expect(
      runClient(&badAuth, serverBytes: [0x05, 0x02, 0x01, 0x01]).outcome
        == .failed(SOCKSError(.authenticationFailed(1), at: 3)))
    var http = try SOCKSClientHandshake(target: .hostname("a"), port: 80)
    #expect(runClient(&http, serverBytes: TorHTTPRejection.bytes).outcome.isFailed)
    var badType = try SOCKSClientHandshake(target: .hostname("a"), port: 80)
    #expect(
      runClient(&badType, serverBytes: [0x05, 0x00, 0x05, 0x00, 0x00, 0x07, 0, 0]).outcome.isFailed)
  }

  @Test func truncatedRepliesWait() throws {
    let server: [UInt8] = [0x05, 0x00, 0x05, 0x00, 0x00, 0x03, 0x02, 0x61, 0x62, 0, 1]
    for cut in 0..<server.count {
      var client = try SOCKSClientHandshake(target: .hostname("a"), port: 80)
      let outcome = runClient(&client, serverBytes: Array(server.prefix(cut))).outcome
      #expect(outcome == .needMoreInput, "cut \(cut)")
    }
  }

  @Test func invalidTargetsAreRefusedUpFront() {
    #expect(throws: SOCKSError(.emptyHostname, at: 0)) {
      try SOCKSClientHandshake(target: .hostname(""), port: 1)
    }
    #expect(throws: SOCKSError(.fieldTooLong("hostname"), at: 0)) {
      try SOCKSClientHandshake(target: .hostname(String(repeating: "a", count: 256)), port: 1)
    }
  }

  /// The client and the server handshakes agree with each other.
  @Test func clientAgainstServer() throws {
    for credentials in [
      SOCKSClientHandshake.Credentials.none,
      .usernamePassword(username: bytes("u"), password: bytes("p")),
    ] {
      var client = try SOCKSClientHandshake(
        target: .hostname("example.onion"), port: 443, credentials: credentials)
      var server = SOCKSServerHandshake(policy: .tor)
      var toServer = client.greeting()
      var toClient: [UInt8] = []
      var request: SOCKSRequest?
      for _ in 0..<8 where request == nil {
        let action = server.handle(toServer)
        toServer.removeFirst(action.consumed)
        toClient += action.reply
        if case .finished(let r) = action.outcome { request = r }
        let clientAction = client.handle(toClient)
        toClient.removeFirst(clientAction.consumed)
        toServer += clientAction.send
      }
      let parsed = try #require(request)
      #expect(parsed.address == .hostname("example.onion"))
      let final = client.handle(parsed.reply(.succeeded))
      #expect(final.outcome.isFinished)
    }
  }
}

extension SOCKSClientAction.Outcome {
  var isFinished: Bool {
    if case .finished = self { return true }
    return false
  }
  var isFailed: Bool {
    if case .failed = self { return true }
    return false
  }
}

import SOCKS
import Testing

@Suite struct SOCKSServerHandshakeTests {
  // RFC 1928 section 3 and 4: no-auth greeting, then CONNECT by each address type.
  @Test func socks5ConnectByHostname() {
    let run = runServer(
      [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0x0B] + bytes("example.com") + [0x01, 0xBB])
    #expect(run.replies == [0x05, 0x00])
    let request = run.outcome.request
    #expect(request?.address == .hostname("example.com"))
    #expect(request?.port == 443)
    #expect(request?.command == .connect)
    #expect(request?.version == .socks5)
    #expect(request?.clientSentRawIP == false)
    #expect(request?.authentication == SOCKSAuthentication.none)
  }

  @Test func socks5ConnectByIPv4KeepsTheRawIPSignal() {
    let run = runServer([0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x01, 127, 0, 0, 1, 0x00, 0x50])
    #expect(run.outcome.request?.address == .ipv4([127, 0, 0, 1]))
    #expect(run.outcome.request?.clientSentRawIP == true)
    #expect(run.outcome.request?.address.description == "127.0.0.1")
  }

  @Test func socks5ConnectByIPv6() {
    let v6: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [1]
    let run = runServer([0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x04] + v6 + [0x00, 0x50])
    #expect(run.outcome.request?.address == .ipv6(v6))
    #expect(run.outcome.request?.address.description == "2001:db8::1")
    #expect(run.outcome.request?.port == 80)
  }

  @Test func optimisticDataStaysInTheBuffer() {
    let run = runServer(
      [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0x01, 0x61, 0x00, 0x50] + bytes("GET /"))
    #expect(run.outcome.request?.address == .hostname("a"))
    #expect(run.leftover == bytes("GET /"))
  }

  // RFC 1929: method 02, then VER ULEN UNAME PLEN PASSWD, answered 01 00.
  @Test func usernamePasswordIsAcceptedAndPreferred() {
    let greeting: [UInt8] = [0x05, 0x02, 0x00, 0x02]
    let auth: [UInt8] = [0x01, 0x04] + bytes("user") + [0x04] + bytes("pass")
    let request: [UInt8] = [0x05, 0x01, 0x00, 0x03, 0x01, 0x61, 0x00, 0x50]
    let run = runServer(greeting + auth + request)
    #expect(run.replies == [0x05, 0x02, 0x01, 0x00])
    #expect(
      run.outcome.request?.authentication
        == .usernamePassword(username: bytes("user"), password: bytes("pass")))
    #expect(
      run.outcome.request?.authentication.isolation
        == .legacy(username: bytes("user"), password: bytes("pass")))
  }

  @Test func emptyCredentialsAreAccepted() {
    let run = runServer([
      0x05, 0x01, 0x02, 0x01, 0x00, 0x00, 0x05, 0x01, 0x00, 0x03, 0x01, 0x61, 0x00, 0x50,
    ])
    #expect(run.replies == [0x05, 0x02, 0x01, 0x00])
    #expect(run.outcome.request != nil)
  }

  @Test func credentialsAfterNoAuthAreTolerated() {
    // tor accepts an RFC 1929 message even after negotiating no-auth (broken clients do this).
    let run = runServer([
      0x05, 0x01, 0x00, 0x01, 0x01, 0x75, 0x01, 0x70, 0x05, 0x01, 0x00, 0x03, 0x01, 0x61, 0x00,
      0x50,
    ])
    #expect(run.replies == [0x05, 0x00, 0x01, 0x00])
    #expect(
      run.outcome.request?.authentication == .usernamePassword(username: [0x75], password: [0x70]))
  }

  @Test func artiOffersNoAuthOnly() {
    let run = runServer([0x05, 0x01, 0x02], policy: .arti)
    #expect(run.replies == [0x05, 0xFF])
    #expect(run.outcome.error?.kind == .noAcceptableMethod([0x02]))
    let both = runServer([0x05, 0x02, 0x00, 0x02], policy: .arti)
    #expect(both.replies == [0x05, 0x00])
  }

  @Test func noAcceptableMethodGets0xFF() {
    let run = runServer([0x05, 0x01, 0x01])
    #expect(run.replies == [0x05, 0xFF])
    #expect(run.outcome.error == SOCKSError(.noAcceptableMethod([0x01]), at: 2))
  }

  @Test func emptyMethodListClosesSilently() {
    let run = runServer([0x05, 0x00])
    #expect(run.replies.isEmpty)
    #expect(run.outcome.error?.kind == .noMethodsOffered)
  }

  @Test(arguments: ["GET / HTTP/1.1\r\n", "HEAD /", "POST /", "PUT /", "CONNECT a:1 HTTP/1.1"])
  func httpOnTheSOCKSPortGetsTorsPage(request: String) {
    let run = runServer(bytes(request))
    #expect(run.replies == TorHTTPRejection.bytes)
    #expect(run.replies.count == 730)
    #expect(run.replies.last == 0)
    #expect(run.outcome.error?.kind == .httpRequestOnSOCKSPort)
  }

  @Test func oneByteIsNotEnoughToDecide() {
    for first: UInt8 in [0x04, 0x05, UInt8(ascii: "G"), 0x00, 0xFF] {
      let run = runServer([first])
      #expect(run.outcome == .needMoreInput)
      #expect(run.replies.isEmpty)
    }
  }

  @Test(arguments: [UInt8(0x00), 0x01, 0x06, 0x7F, 0xFF, UInt8(ascii: "X")])
  func unknownVersionsCloseSilently(version: UInt8) {
    let run = runServer([version, 0x01, 0x00])
    #expect(run.replies.isEmpty)
    #expect(run.outcome.error == SOCKSError(.unsupportedVersion(version), at: 0))
  }

  @Test func authVersionOtherThanOneGetsAGeneralFailure() {
    let run = runServer([0x05, 0x01, 0x02, 0x02, 0x01, 0x75, 0x01, 0x70])
    #expect(run.replies == [0x05, 0x02] + socks5Reply(0x01))
    #expect(run.outcome.error == SOCKSError(.unsupportedAuthVersion(2), at: 3))
  }

  // torspec socks-extensions: <torS0X>0 means the password is the isolation key.
  @Test func isolationUsernames() {
    func auth(_ user: String, _ password: String = "p") -> [UInt8] {
      [0x05, 0x01, 0x02, 0x01, UInt8(user.utf8.count)] + bytes(user) + [UInt8(password.utf8.count)]
        + bytes(password)
        + [0x05, 0x01, 0x00, 0x03, 0x01, 0x61, 0x00, 0x50]
    }
    let good = runServer(auth("<torS0X>0", "key"))
    #expect(good.outcome.request?.authentication.isolation == .key(bytes("key")))
    for bad in ["<torS0X>", "<torS0X>9", "<torS0X>1", "<torS0X>00", "<torS0X>1abc"] {
      let run = runServer(auth(bad))
      #expect(run.replies == [0x05, 0x02] + socks5Reply(0x01), "\(bad)")
      #expect(run.outcome.error?.kind == .malformedIsolationUsername, "\(bad)")
    }
    #expect(
      SOCKSAuthentication.usernamePassword(username: bytes("<torS0X>1abc"), password: []).isolation
        == .rpcObject(id: bytes("abc"), password: []))
  }

  @Test func torExtensionsResolveAndResolvePTR() {
    let resolve = runServer(
      [0x05, 0x01, 0x00, 0x05, 0xF0, 0x00, 0x03, 0x0B] + bytes("example.com") + [0, 0])
    #expect(resolve.outcome.request?.command == .resolve)
    #expect(resolve.outcome.request?.address == .hostname("example.com"))
    let ptr = runServer([0x05, 0x01, 0x00, 0x05, 0xF1, 0x00, 0x01, 8, 8, 8, 8, 0, 0])
    #expect(ptr.outcome.request?.command == .resolvePTR)
    let ptrByName = runServer([0x05, 0x01, 0x00, 0x05, 0xF1, 0x00, 0x03, 0x01, 0x61, 0, 0])
    #expect(ptrByName.replies == [0x05, 0x00] + socks5Reply(0x08))
    #expect(ptrByName.outcome.error?.kind == .addressTypeNotAllowed(.resolvePTR))
  }

  @Test func resolveRepliesCarryTheAnswer() {
    let v5 = SOCKSRequest(version: .socks5, command: .resolve, address: .hostname("a"), port: 0)
    #expect(v5.resolvedReply(.ipv4([10, 0, 0, 1])) == [0x05, 0x00, 0x00, 0x01, 10, 0, 0, 1, 0, 0])
    #expect(v5.resolvedReply(.hostname("ab")) == [0x05, 0x00, 0x00, 0x03, 0x02, 0x61, 0x62, 0, 0])
    let v4 = SOCKSRequest(version: .socks4a, command: .resolve, address: .hostname("a"), port: 0)
    #expect(v4.resolvedReply(.ipv4([10, 0, 0, 1])) == [0x00, 0x5A, 0, 0, 10, 0, 0, 1])
    #expect(v5.reply(.onionInvalidAddress) == socks5Reply(0xF6))
    #expect(v4.reply(.connectionRefused) == socks4Rejected)
  }

  @Test func requestErrorsGetTorsReplyCodes() {
    let greeting: [UInt8] = [0x05, 0x01, 0x00]
    let cases: [(String, [UInt8], UInt8, SOCKSError)] = [
      (
        "BIND", [0x05, 0x02, 0x00, 0x01, 1, 2, 3, 4, 0, 80], 0x07,
        SOCKSError(.commandNotAllowed(.bind), at: 4)
      ),
      (
        "UDP", [0x05, 0x03, 0x00, 0x01, 1, 2, 3, 4, 0, 80], 0x07,
        SOCKSError(.commandNotAllowed(.udpAssociate), at: 4)
      ),
      (
        "cmd 9", [0x05, 0x09, 0x00, 0x01, 1, 2, 3, 4, 0, 80], 0x01,
        SOCKSError(.unsupportedCommand(9), at: 4)
      ),
      (
        "atyp 5", [0x05, 0x01, 0x00, 0x05, 1, 2, 3, 4, 0, 80], 0x01,
        SOCKSError(.unsupportedAddressType(5), at: 6)
      ),
      (
        "atyp 0", [0x05, 0x01, 0x00, 0x00, 1, 2, 3, 4, 0, 80], 0x01,
        SOCKSError(.unsupportedAddressType(0), at: 6)
      ),
      (
        "rsv", [0x05, 0x01, 0x01, 0x01, 1, 2, 3, 4, 0, 80], 0x01,
        SOCKSError(.reservedByteNotZero(1), at: 5)
      ),
      (
        "ver 6", [0x06, 0x01, 0x00, 0x01, 1, 2, 3, 4, 0, 80], 0x01,
        SOCKSError(.unexpectedRequestVersion(6), at: 3)
      ),
      (
        "empty name", [0x05, 0x01, 0x00, 0x03, 0x00, 0, 80], 0x01, SOCKSError(.emptyHostname, at: 7)
      ),
      (
        "non-UTF-8", [0x05, 0x01, 0x00, 0x03, 0x03, 0xFF, 0xFE, 0x80, 0, 80], 0x01,
        SOCKSError(.hostnameNotUTF8, at: 7)
      ),
      (
        "UTF-8 but not a hostname", [0x05, 0x01, 0x00, 0x03, 0x02, 0xC3, 0xA9, 0, 80], 0x01,
        SOCKSError(.invalidHostname("\u{E9}"), at: 7)
      ),
      (
        "space", [0x05, 0x01, 0x00, 0x03, 0x03, 0x61, 0x20, 0x62, 0, 80], 0x01,
        SOCKSError(.invalidHostname("a b"), at: 7)
      ),
      (
        "NUL", [0x05, 0x01, 0x00, 0x03, 0x03, 0x61, 0x00, 0x62, 0, 80], 0x01,
        SOCKSError(.invalidHostname("a\0b"), at: 7)
      ),
      (
        "leading hyphen", [0x05, 0x01, 0x00, 0x03, 0x02, 0x2D, 0x61, 0, 80], 0x01,
        SOCKSError(.invalidHostname("-a"), at: 7)
      ),
      (
        "empty label", [0x05, 0x01, 0x00, 0x03, 0x03, 0x61, 0x2E, 0x2E, 0, 80], 0x01,
        SOCKSError(.invalidHostname("a.."), at: 7)
      ),
      ("port 0", [0x05, 0x01, 0x00, 0x03, 0x01, 0x61, 0, 0], 0x01, SOCKSError(.portZero, at: 9)),
    ]
    for (name, request, code, error) in cases {
      let run = runServer(greeting + request)
      #expect(run.replies == [0x05, 0x00] + socks5Reply(code), "\(name)")
      #expect(run.outcome.error == error, "\(name)")
    }
  }

  @Test func artiRejectsEverythingButConnectWith0x01() {
    for command: UInt8 in [0x02, 0x03, 0xF0, 0xF1] {
      let run = runServer(
        [0x05, 0x01, 0x00, 0x05, command, 0x00, 0x01, 1, 2, 3, 4, 0, 80], policy: .arti)
      #expect(run.replies == [0x05, 0x00] + socks5Reply(0x01))
    }
    #expect(runServer([0x04, 0x01, 0x00, 0x50, 1, 2, 3, 4, 0x00], policy: .arti).replies.isEmpty)
  }

  @Test func hostnamesTorAccepts() {
    for name in [
      "a", "a.", "a_b", "xn--bcher-kva.example", "127.0.0.1", "::1", "[::1]",
      String(repeating: "a", count: 255),
    ] {
      let raw = bytes(name)
      let run = runServer(
        [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, UInt8(raw.count)] + raw + [0, 80])
      #expect(run.outcome.request?.address == .hostname(name), "\(name)")
    }
  }

  // SOCKS4 (user id) and SOCKS4a (0.0.0.x and a hostname).
  @Test func socks4AndSOCKS4a() {
    let v4 = runServer([0x04, 0x01, 0x00, 0x50, 10, 0, 0, 1] + bytes("fred") + [0])
    #expect(
      v4.outcome.request
        == SOCKSRequest(
          version: .socks4, command: .connect, address: .ipv4([10, 0, 0, 1]), port: 80,
          authentication: .socks4UserID(bytes("fred"))))
    let v4a = runServer(
      [0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0] + bytes("example.com") + [0] + bytes("data"))
    #expect(v4a.outcome.request?.version == .socks4a)
    #expect(v4a.outcome.request?.address == .hostname("example.com"))
    #expect(v4a.outcome.request?.authentication.isolation == SOCKSIsolation.none)
    #expect(v4a.leftover == bytes("data"))
    let resolve = runServer([0x04, 0xF0, 0x00, 0x00, 0, 0, 0, 1, 0] + bytes("example.com") + [0])
    #expect(resolve.outcome.request?.command == .resolve)
  }

  @Test func socks4Rejections() {
    let cases: [(String, [UInt8])] = [
      ("BIND", [0x04, 0x02, 0x00, 0x50, 1, 2, 3, 4, 0]),
      ("RESOLVE_PTR", [0x04, 0xF1, 0x00, 0x00, 1, 2, 3, 4, 0]),
      ("cmd 9", [0x04, 0x09, 0x00, 0x50, 1, 2, 3, 4, 0]),
      ("port 0", [0x04, 0x01, 0x00, 0x00, 1, 2, 3, 4, 0]),
      (
        "256-byte name",
        [0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0] + [UInt8](repeating: 0x61, count: 256) + [0]
      ),
      (
        "user id without NUL",
        [0x04, 0x01, 0x00, 0x50, 1, 2, 3, 4] + [UInt8](repeating: 0x75, count: 600)
      ),
      (
        "name without NUL",
        [0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0] + [UInt8](repeating: 0x61, count: 600)
      ),
      ("empty name", [0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0, 0]),
      ("non-UTF-8 name", [0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0, 0xFF, 0]),
    ]
    for (name, request) in cases {
      let run = runServer(request)
      #expect(run.replies == socks4Rejected, "\(name)")
      #expect(run.outcome.error != nil, "\(name)")
    }
  }

  /// Every proper prefix of a valid exchange asks for more input and sends only the replies
  /// to the messages already complete.
  @Test func truncatedAtEveryByteWaits() {
    let exchanges: [[UInt8]] = [
      [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0x0B] + bytes("example.com") + [0x01, 0xBB],
      [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x01, 1, 2, 3, 4, 0x00, 0x50],
      [0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x04] + [UInt8](repeating: 1, count: 16) + [0x00, 0x50],
      [0x05, 0x01, 0x02, 0x01, 0x01, 0x75, 0x01, 0x70, 0x05, 0xF0, 0x00, 0x03, 0x01, 0x61, 0, 0],
      [0x04, 0x01, 0x00, 0x50, 1, 2, 3, 4, 0x75, 0],
      [0x04, 0x01, 0x00, 0x50, 0, 0, 0, 1, 0x75, 0, 0x61, 0],
    ]
    for exchange in exchanges {
      #expect(runServer(exchange).outcome.request != nil)
      for cut in 0..<exchange.count {
        let run = runServer(Array(exchange.prefix(cut)))
        #expect(run.outcome == .needMoreInput, "cut at \(cut) of \(exchange)")
        #expect(run.leftover.count <= cut)
      }
      // Byte by byte gives the same result as all at once.
      let trickled = runServer(exchange, chunks: [Int](repeating: 1, count: exchange.count))
      #expect(trickled.outcome == runServer(exchange).outcome)
      #expect(trickled.replies == runServer(exchange).replies)
    }
  }

  @Test func errorsNameTheByteOffset() {
    let error = SOCKSError(.reservedByteNotZero(1), at: 5)
    #expect(error.description == "SOCKS: reserved byte is 0x01, must be 0 at byte 5")
  }
}

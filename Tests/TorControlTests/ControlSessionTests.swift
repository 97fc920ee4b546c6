import Digest
import Testing

@testable import TorControl

/// Expected bytes come from transcripts of Debian's tor 0.4.9.11 (DisableNetwork 1,
/// CookieAuthentication 1, HashedControlPassword for "secret123").
@Suite struct ControlSessionTests {
  static let cookie = [UInt8](0..<32)
  static let both = ControlAuthentication(
    password: "secret123", cookie: cookie, cookieFilePath: "/tmp/ctl-probe/data/control_auth_cookie"
  )

  struct Harness {
    var session: ControlSession
    var context = ControlContext()
    var closed = false
    var actions: [ControlAction] = []
    var records: [ControlCommandRecord] = []

    init(_ auth: ControlAuthentication) {
      session = ControlSession(authentication: auth) { [UInt8](repeating: 0xAB, count: 32) }
    }

    mutating func send(_ text: String) -> String {
      let output = session.receive(Array(text.utf8), context: &context)
      closed = closed || output.close
      actions += output.actions
      records += output.commands
      return String(decoding: output.bytes, as: UTF8.self)
    }
  }

  static func authenticated(_ auth: ControlAuthentication = both) -> Harness {
    var harness = Harness(auth)
    _ = harness.send("AUTHENTICATE \"secret123\"\r\n")
    return harness
  }

  @Test func protocolInfoAsTorFormatsIt() {
    var harness = Harness(Self.both)
    #expect(
      harness.send("PROTOCOLINFO 1\r\n")
        == "250-PROTOCOLINFO 1\r\n"
        + "250-AUTH METHODS=COOKIE,SAFECOOKIE,HASHEDPASSWORD "
        + "COOKIEFILE=\"/tmp/ctl-probe/data/control_auth_cookie\"\r\n"
        + "250-VERSION Tor=\"0.4.9.11\"\r\n250 OK\r\n")
    #expect(!harness.closed)
    // A second PROTOCOLINFO before authenticating is refused and closes, like tor.
    #expect(harness.send("PROTOCOLINFO\r\n") == "514 Authentication required.\r\n")
    #expect(harness.closed)
  }

  @Test func protocolInfoMethodsPerConfiguration() {
    var none = Harness(.none)
    #expect(none.send("PROTOCOLINFO\r\n").contains("250-AUTH METHODS=NULL\r\n"))
    var password = Harness(ControlAuthentication(password: "x"))
    #expect(password.send("PROTOCOLINFO\r\n").contains("250-AUTH METHODS=HASHEDPASSWORD\r\n"))
  }

  @Test func protocolInfoWithABadVersionClosesBeforeAuth() {
    var harness = Harness(Self.both)
    #expect(harness.send("PROTOCOLINFO foo\r\n") == "513 No such version \"foo\"\r\n")
    #expect(harness.closed)
  }

  @Test func commandsBeforeAuthenticationAreRefusedAndClose() {
    for command in ["GETINFO version\r\n", "FOO\r\n", "\r\n", "+AUTHENTICATE\r\nx\r\n.\r\n"] {
      var harness = Harness(Self.both)
      #expect(harness.send(command) == "514 Authentication required.\r\n")
      #expect(harness.closed)
      #expect(harness.send("PROTOCOLINFO\r\n") == "")
    }
  }

  @Test func quitIsAlwaysAllowed() {
    var harness = Harness(Self.both)
    #expect(harness.send("QUIT extra\r\n") == "250 closing connection\r\n")
    #expect(harness.closed)
  }

  @Test func badPasswordWithCookieAlsoConfigured() {
    let expected =
      "515 Authentication failed: Password did not match HashedControlPassword *or* "
      + "authentication cookie.\r\n"
    for command in ["AUTHENTICATE \"wrong\"\r\n", "AUTHENTICATE\r\n"] {
      var harness = Harness(Self.both)
      #expect(harness.send(command) == expected)
      #expect(harness.closed)
    }
  }

  @Test func plainTextPasswordIsInvalidHex() {
    var harness = Harness(Self.both)
    #expect(
      harness.send("AUTHENTICATE secret123\r\n")
        == "551 Invalid hexadecimal encoding.  Maybe you tried a plain text password?  "
        + "If so, the standard requires that you put it in double quotes.\r\n")
    #expect(harness.closed)
  }

  @Test func unterminatedQuoteIsABadArgumentButKeepsTheConnection() {
    var harness = Harness(Self.both)
    #expect(
      harness.send("AUTHENTICATE \"secret123\r\n")
        == "512 Bad arguments to AUTHENTICATE: Cannot parse keyword argument(s)\r\n")
    #expect(!harness.closed)
  }

  @Test func passwordOnlyMessages() {
    var quoted = Harness(ControlAuthentication(password: "right"))
    #expect(
      quoted.send("AUTHENTICATE \"wrong\"\r\n")
        == "515 Authentication failed: Password did not match HashedControlPassword value "
        + "from configuration\r\n")
    var hex = Harness(ControlAuthentication(password: "right"))
    #expect(hex.send("AUTHENTICATE 00\r\n").hasSuffix("put it in double quotes.\r\n"))
    var good = Harness(ControlAuthentication(password: "right"))
    #expect(good.send("AUTHENTICATE 7269676874\r\n") == "250 OK\r\n")
    #expect(good.session.isAuthenticated)
  }

  @Test func passwordWithEscapes() {
    var harness = Harness(ControlAuthentication(password: "a\"b\\c"))
    #expect(harness.send("AUTHENTICATE \"a\\\"b\\\\c\"\r\n") == "250 OK\r\n")
  }

  @Test func cookieAuthentication() {
    let auth = ControlAuthentication(cookie: Self.cookie, cookieFilePath: "/c")
    var good = Harness(auth)
    #expect(
      good.send("AUTHENTICATE \(ControlArguments.encodeHex(Self.cookie))\r\n") == "250 OK\r\n")
    var short = Harness(auth)
    #expect(
      short.send("AUTHENTICATE 0011\r\n")
        == "515 Authentication failed: Wrong length on authentication cookie.\r\n")
    var wrong = Harness(auth)
    #expect(
      wrong.send("AUTHENTICATE \(String(repeating: "FF", count: 32))\r\n")
        == "515 Authentication failed: Authentication cookie did not match expected value.\r\n")
  }

  @Test func noAuthenticationAcceptsAnything() {
    var harness = Harness(.none)
    #expect(harness.send("AUTHENTICATE\r\n") == "250 OK\r\n")
  }

  @Test func tooManyAuthenticateArgumentsClose() {
    var harness = Harness(Self.both)
    #expect(harness.send("AUTHENTICATE a b\r\n") == "512 Too many arguments to AUTHENTICATE.\r\n")
    #expect(harness.closed)
  }

  @Test func safeCookieChallengeAndResponse() {
    let auth = ControlAuthentication(cookie: Self.cookie, cookieFilePath: "/c")
    var harness = Harness(auth)
    let clientNonce = [UInt8](repeating: 0x11, count: 32)
    let reply = harness.send(
      "AUTHCHALLENGE SAFECOOKIE \(ControlArguments.encodeHex(clientNonce))\r\n")
    let serverNonce = [UInt8](repeating: 0xAB, count: 32)
    let material = Self.cookie + clientNonce + serverNonce
    let serverHash = SHA256.hmac(key: ControlSession.serverToControllerKey, message: material)
    #expect(
      reply
        == "250 AUTHCHALLENGE SERVERHASH=\(ControlArguments.encodeHex(serverHash)) "
        + "SERVERNONCE=\(ControlArguments.encodeHex(serverNonce))\r\n")
    let clientHash = SHA256.hmac(key: ControlSession.controllerToServerKey, message: material)
    // After a challenge, only the response is accepted: the raw cookie is not.
    var replay = harness
    #expect(
      replay.send("AUTHENTICATE \(ControlArguments.encodeHex(Self.cookie))\r\n")
        == "515 Authentication failed: Safe cookie response did not match expected value.\r\n")
    #expect(
      harness.send("AUTHENTICATE \(ControlArguments.encodeHex(clientHash))\r\n") == "250 OK\r\n")
  }

  @Test func authChallengeErrors() {
    var other = Harness(Self.both)
    #expect(
      other.send("AUTHCHALLENGE FOO 0011\r\n")
        == "513 AUTHCHALLENGE only supports SAFECOOKIE authentication\r\n")
    #expect(other.closed)
    var disabled = Harness(ControlAuthentication(password: "x"))
    #expect(
      disabled.send("AUTHCHALLENGE SAFECOOKIE 00\r\n")
        == "515 Cookie authentication is disabled\r\n")
    var bad = Harness(Self.both)
    #expect(bad.send("AUTHCHALLENGE SAFECOOKIE zz\r\n") == "513 Invalid base16 client nonce\r\n")
    var missing = Harness(Self.both)
    #expect(
      missing.send("AUTHCHALLENGE\r\n")
        == "512 Bad arguments to AUTHCHALLENGE: Need at least 1 argument(s)\r\n")
  }

  @Test func unknownCommandsAndKeys() {
    var harness = Self.authenticated()
    #expect(harness.send("FOO bar\r\n") == "510 Unrecognized command \"FOO\"\r\n")
    #expect(harness.send("GETINFO nosuch\r\n") == "552 Unrecognized key \"nosuch\"\r\n")
    #expect(
      harness.send("GETINFO version nosuch other\r\n")
        == "552-Unrecognized key \"nosuch\"\r\n552 Unrecognized key \"other\"\r\n")
    #expect(harness.send("GETINFO \"version\"\r\n") == "552 Unrecognized key \"\"version\"\"\r\n")
    #expect(harness.send("MAPADDRESS a=b\r\n") == "511 Unimplemented command \"MAPADDRESS\"\r\n")
    #expect(!harness.closed)
  }

  @Test func getInfoAnswers() {
    var harness = Self.authenticated()
    harness.context.socksListeners = ["127.0.0.1:39050"]
    #expect(
      harness.send("GETINFO version status/bootstrap-phase net/listeners/socks\r\n")
        == "250-version=0.4.9.11\r\n"
        + "250-status/bootstrap-phase=NOTICE BOOTSTRAP PROGRESS=0 TAG=starting SUMMARY=\"Starting\"\r\n"
        + "250-net/listeners/socks=\"127.0.0.1:39050\"\r\n250 OK\r\n")
    #expect(
      harness.send("GETINFO orconn-status circuit-status\r\n")
        == "250-orconn-status=\r\n250-circuit-status=\r\n250 OK\r\n")
    harness.context.orconnStatus = ["$AAAA~guard CONNECTED", ".dot"]
    #expect(
      harness.send("getinfo orconn-status\n")
        == "250+orconn-status=\r\n$AAAA~guard CONNECTED\r\n..dot\r\n.\r\n250 OK\r\n")
    #expect(harness.send("GETINFO\r\n") == "250 OK\r\n")
  }

  @Test func signals() {
    var harness = Self.authenticated()
    #expect(harness.send("SIGNAL BOGUS\r\n") == "552 Unrecognized signal code \"BOGUS\"\r\n")
    #expect(harness.send("SIGNAL newnym\r\n") == "250 OK\r\n")
    #expect(harness.send("SIGNAL RELOAD\r\nSIGNAL HUP\r\n") == "250 OK\r\n250 OK\r\n")
    #expect(
      harness.send("SIGNAL\r\n") == "512 Bad arguments to SIGNAL: Need at least 1 argument(s)\r\n")
    #expect(
      harness.send("SIGNAL NEWNYM HUP\r\n")
        == "512 Bad arguments to SIGNAL: Cannot accept more than 1 argument(s)\r\n")
    #expect(harness.send("SIGNAL SHUTDOWN\r\n") == "250 OK\r\n")
    #expect(
      harness.actions == [
        .signal("NEWNYM"), .signal("RELOAD"), .signal("HUP"), .signal("SHUTDOWN"),
      ])
  }

  @Test func disableNetworkConfiguration() {
    var harness = Self.authenticated()
    harness.context.disableNetwork = true
    #expect(harness.send("GETCONF DisableNetwork\r\n") == "250 DisableNetwork=1\r\n")
    #expect(harness.send("SETCONF DisableNetwork=0\r\n") == "250 OK\r\n")
    #expect(harness.send("GETCONF disablenetwork\r\n") == "250 DisableNetwork=0\r\n")
    #expect(harness.send("SETCONF DisableNetwork=\"1\"\r\n") == "250 OK\r\n")
    #expect(harness.context.disableNetwork)
    #expect(harness.send("RESETCONF DisableNetwork\r\n") == "250 OK\r\n")
    #expect(!harness.context.disableNetwork)
    #expect(
      harness.actions == [
        .setDisableNetwork(false), .setDisableNetwork(true), .setDisableNetwork(false),
      ])
    #expect(
      harness.send("SETCONF DisableNetwork=2\r\n")
        == "513 Unacceptable option value: Could not parse DisableNetwork: Unrecognized value 2. "
        + "Allowed values are 0 and 1.\r\n")
    #expect(
      harness.send("SETCONF Bogus=1\r\n")
        == "552 Unrecognized option: Unknown option 'Bogus'.  Failing.\r\n")
    #expect(
      harness.send("GETCONF Bogus\r\n") == "552 Unrecognized configuration key \"Bogus\"\r\n")
    #expect(harness.send("GETCONF\r\n") == "250 OK\r\n")
  }

  @Test func eventsFlowOnlyAfterSubscribing() {
    var harness = Self.authenticated()
    let event = ControlAsyncEvent.bootstrap(BootstrapPhase.named("conn")!)
    #expect(harness.session.render(event) == nil)
    #expect(harness.send("SETEVENTS BOGUS\r\n") == "552 Unrecognized event \"BOGUS\"\r\n")
    #expect(
      harness.send("SETEVENTS STATUS_CLIENT BOGUS\r\n") == "552 Unrecognized event \"BOGUS\"\r\n")
    #expect(harness.session.subscriptions.isEmpty)
    #expect(harness.send("SETEVENTS EXTENDED status_client\r\n") == "250 OK\r\n")
    #expect(
      harness.session.render(event).map { String(decoding: $0, as: UTF8.self) }
        == "650 STATUS_CLIENT NOTICE BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY=\"Connecting to a relay\"\r\n"
    )
    #expect(harness.session.render(.networkLiveness(up: true)) == nil)
    #expect(harness.send("SETEVENTS\r\n") == "250 OK\r\n")
    #expect(harness.session.render(event) == nil)
  }

  @Test func dataCommands() {
    var harness = Self.authenticated()
    #expect(
      harness.send("+POSTDESCRIPTOR\r\nrouter x\r\n.\r\n")
        == "511 Unimplemented command \"+POSTDESCRIPTOR\"\r\n")
    #expect(harness.send("+FOO\r\n..a\r\n.\n") == "510 Unrecognized command \"+FOO\"\r\n")
  }

  @Test func bytesSplitAnywhereGiveTheSameReplies() {
    var harness = Self.authenticated()
    var out = ""
    for byte in "GETINFO version\r\nSIGNAL NEWNYM\n".utf8 {
      out += String(
        decoding: harness.session.receive([byte], context: &harness.context).bytes, as: UTF8.self)
    }
    #expect(out == "250-version=0.4.9.11\r\n250 OK\r\n250 OK\r\n")
  }

  @Test func httpOnTheControlPort() {
    var harness = Harness(Self.both)
    let reply = harness.send("GET / HTTP/1.0\r\n\r\n")
    #expect(reply.hasPrefix("HTTP/1.0 501 Tor ControlPort is not an HTTP proxy\r\n"))
    #expect(harness.closed)
  }

  @Test func overlongCommandsClose() {
    var harness = Harness(Self.both)
    let reply = harness.send(
      String(repeating: "A", count: ControlCommandFramer.defaultMaximumCommandBytes + 1))
    #expect(reply == "500 Line too long.\r\n")
    #expect(harness.closed)
  }

  @Test func logRecordsScrubSecrets() {
    var harness = Self.authenticated()
    _ = harness.send("GETINFO version\r\n")
    #expect(harness.records.map(\.keyword) == ["AUTHENTICATE", "GETINFO"])
    #expect(harness.records[0].arguments == "[scrubbed]")
    #expect(harness.records[1].arguments == "version")
    #expect(harness.records.map(\.replyCode) == [250, 250])
  }
}

import Testing

@testable import TorControl

@Suite struct ControlArgumentsTests {
  @Test func splitsLikeTor() {
    #expect(ControlArguments.split("a  b\tc ") == ["a", "b\tc"])
    #expect(ControlArguments.split("NEWNYM HUP extra", limit: 2) == ["NEWNYM", "HUP extra"])
    #expect(ControlArguments.split("") == [])
  }

  @Test func keyValues() {
    let setconf = ControlArguments.keyValues(
      "DisableNetwork=1 Log=\"notice stdout\" Flag", omitKeys: false, omitValues: true)
    #expect(
      setconf == [
        .init(key: "DisableNetwork", value: "1"),
        .init(key: "Log", value: "notice stdout", quoted: true),
        .init(key: "Flag", value: nil),
      ])
    #expect(ControlArguments.keyValues("Flag", omitKeys: false, omitValues: false) == nil)
    #expect(ControlArguments.keyValues("\"open", omitKeys: true, omitValues: false) == nil)
    #expect(ControlArguments.keyValues("\"a\"b", omitKeys: true, omitValues: false) == nil)
    #expect(
      ControlArguments.keyValues("\"p w\"", omitKeys: true, omitValues: false)
        == [.init(key: "", value: "p w", quoted: true)])
  }

  @Test func quotedStringEscapes() {
    let text = Array("\"a\\n\\t\\\"\\\\\\x41\\101\"rest")
    let decoded = ControlArguments.decodeQuoted(text, from: 0)
    #expect(decoded?.0 == "a\n\t\"\\AA")
    #expect(decoded?.1 == text.count - 4)
    #expect(ControlArguments.decodeQuoted(Array("\"bad\\q\""), from: 0) == nil)
    #expect(ControlArguments.decodeQuoted(Array("\"cut\\"), from: 0) == nil)
    #expect(ControlArguments.quote("a\"b\\c\n\u{1}") == "\"a\\\"b\\\\c\\n\\001\"")
  }

  @Test func hex() {
    #expect(ControlArguments.decodeHex("00aBff") == [0, 0xAB, 0xFF])
    #expect(ControlArguments.decodeHex("abc") == nil)
    #expect(ControlArguments.decodeHex("zz") == nil)
    #expect(ControlArguments.encodeHex([0, 0xAB]) == "00AB")
  }
}

@Suite struct ControlCommandFramerTests {
  @Test func crlfAndBareLF() {
    var framer = ControlCommandFramer()
    framer.append(Array("GETINFO version\r\nsignal newnym\nPART".utf8))
    #expect(framer.next() == .command(.init(keyword: "GETINFO", arguments: "version")))
    #expect(framer.next() == .command(.init(keyword: "signal", arguments: "newnym")))
    #expect(framer.next() == nil)
    framer.append(Array("IAL\r\n".utf8))
    #expect(framer.next() == .command(.init(keyword: "PARTIAL", arguments: "")))
  }

  @Test func dataCommandRunsToTheDotLine() {
    var framer = ControlCommandFramer()
    framer.append(Array("+LOADCONF arg\r\nline1\r\n..dotted\r\n".utf8))
    #expect(framer.next() == nil)
    framer.append(Array(".\r\nNEXT\r\n".utf8))
    #expect(
      framer.next()
        == .command(.init(keyword: "+LOADCONF", arguments: "arg", body: "line1\n.dotted")))
    #expect(framer.next() == .command(.init(keyword: "NEXT", arguments: "")))
  }

  @Test func capsTheCommandLength() {
    var framer = ControlCommandFramer(maximumCommandBytes: 16)
    framer.append(Array("GETINFO 12345678".utf8))
    #expect(framer.next() == nil)
    framer.append([UInt8(ascii: "9")])
    #expect(framer.next() == .tooLong)
    framer.append(Array("QUIT\r\n".utf8))
    #expect(framer.next() == nil)
    var data = ControlCommandFramer(maximumCommandBytes: 16)
    data.append(Array("+X\r\naaaaaa\r\nbbbbbbbb\r\n".utf8))
    #expect(data.next() == .tooLong)
  }

  @Test func nonUTF8DoesNotCrash() {
    var framer = ControlCommandFramer()
    framer.append([0xFF, 0xFE, 0x20, 0x80, 0x0A])
    guard case .command(let command) = framer.next() else {
      Issue.record("expected a command")
      return
    }
    #expect(command.keyword == "\u{FFFD}\u{FFFD}")
  }
}

@Suite struct ControlReplyTests {
  @Test func formatsMidDataAndEndLines() {
    let reply = ControlReply([
      .init(code: 250, text: "a=1"), ControlReply.keyValue("b", "x\n.y"),
      .init(code: 250, text: "OK"),
    ])
    #expect(reply.text == "250-a=1\r\n250+b=\r\nx\r\n..y\r\n.\r\n250 OK\r\n")
  }

  @Test func asyncEvents() {
    let warning = BootstrapWarning(
      phase: BootstrapPhase.named("conn")!, warning: "Connection refused", reason: "CONNECTREFUSED",
      count: 10, recommendation: "warn", hostID: "AB", hostAddress: "127.0.0.1:9001")
    #expect(
      ControlAsyncEvent.bootstrap(warning).text
        == "650 STATUS_CLIENT WARN BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY=\"Connecting to a relay\" "
        + "WARNING=\"Connection refused\" REASON=CONNECTREFUSED COUNT=10 RECOMMENDATION=warn "
        + "HOSTID=\"AB\" HOSTADDR=\"127.0.0.1:9001\"\r\n")
    #expect(
      ControlAsyncEvent.circuitNotEstablished(reason: "DIR_ALL_UNREACHABLE").text
        == "650 STATUS_CLIENT NOTICE CIRCUIT_NOT_ESTABLISHED REASON=DIR_ALL_UNREACHABLE\r\n")
    var state = BootstrapState.initial
    state.lastWarning = warning
    #expect(ControlAsyncEvent.bootstrapPhaseLine(state).hasPrefix("WARN BOOTSTRAP PROGRESS=5 "))
  }
}

@Suite struct ControlReplyParserTests {
  @Test func readsRepliesAndInterleavedEvents() throws {
    var parser = ControlReplyParser()
    parser.append(
      Array(
        ("650 STATUS_CLIENT NOTICE BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY=\"x\"\r\n"
          + "250-version=0.4.9.11\r\n250+orconn-status=\r\n$A~g CONNECTED\r\n..x\r\n.\r\n"
          + "250 OK\r\n552 Unrecognized key \"k\"\n250-partial").utf8))
    let event = try parser.next()
    #expect(event?.isAsyncEvent == true)
    #expect(event?.lines.first?.text.hasPrefix("STATUS_CLIENT NOTICE BOOTSTRAP") == true)
    let reply = try parser.next()
    #expect(reply?.isSuccess == true)
    #expect(reply?.value(for: "version") == "0.4.9.11")
    #expect(reply?.value(for: "orconn-status") == "$A~g CONNECTED\n.x")
    let error = try parser.next()
    #expect(error?.code == 552)
    #expect(try parser.next() == nil)
    parser.append(Array("\r\n250 OK\r\n".utf8))
    #expect(try parser.next()?.lines.count == 2)
  }

  @Test func rejectsGarbageWithItsOffset() {
    var parser = ControlReplyParser()
    parser.append(Array("250 OK\r\nHTTP/1.0 501\r\n".utf8))
    #expect(throws: Never.self) { _ = try parser.next() }
    #expect {
      _ = try parser.next()
    } throws: { error in
      (error as? ControlReplyError)?.offset == 8
    }
  }

  /// Canary: a data block that never ends, and a reply of endless "250-" lines, stop at the
  /// message cap with the offset where the message began; the control: a reply just under it.
  @Test func capsAWholeMessage() throws {
    var endless = ControlReplyParser(maximumLineBytes: 64, maximumMessageBytes: 1000)
    endless.append(Array("250 OK\r\n250+ns/all=\r\n".utf8))
    #expect(try endless.next()?.code == 250)
    for _ in 0..<200 { endless.append(Array("r relay 1.2.3.4\r\n".utf8)) }
    #expect {
      _ = try endless.next()
    } throws: { error in
      (error as? ControlReplyError)?.offset == 8
        && (error as? ControlReplyError)?.reason
          == "message longer than 1000 bytes: the data block of \"250+ns/all=\" has no \".\" line"
    }

    var dashes = ControlReplyParser(maximumLineBytes: 64, maximumMessageBytes: 1000)
    for _ in 0..<120 { dashes.append(Array("250-k=v\r\n".utf8)) }
    #expect(throws: ControlReplyError.self) { _ = try dashes.next() }

    var control = ControlReplyParser(maximumLineBytes: 64, maximumMessageBytes: 1000)
    for _ in 0..<98 { control.append(Array("250-k=v\r\n".utf8)) }
    control.append(Array("250 OK\r\n650 X\r\n".utf8))
    #expect(try control.next()?.lines.count == 99)
    #expect(try control.next()?.code == 650)
  }

  @Test func roundTripsTheServerFormat() throws {
    var harness = ControlSession(authentication: .none) { [] }
    var context = ControlContext(orconnStatus: ["a", "b"])
    let bytes = harness.receive(
      Array("AUTHENTICATE\r\nGETINFO orconn-status version\r\n".utf8), context: &context
    ).bytes
    var parser = ControlReplyParser()
    parser.append(bytes)
    #expect(try parser.next()?.code == 250)
    let info = try parser.next()
    #expect(info?.value(for: "orconn-status") == "a\nb")
    #expect(info?.value(for: "version") == "0.4.9.11")
  }
}

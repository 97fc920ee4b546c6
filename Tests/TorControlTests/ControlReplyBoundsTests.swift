import Testing

@testable import TorControl

/// A hostile control port cannot make the client's parser hold more than its caps: a line
/// longer than the line cap is refused whether or not its end has arrived, and a `250+` data
/// block that never ends stops at the message cap, with what was too long in the error. The
/// positive control: a large but legal block (1 MiB, far above any testnet reply) parses whole.
@Suite struct ControlReplyBoundsTests {
  static func reason(_ body: () throws -> Void) -> String? {
    do {
      try body()
      return nil
    } catch let error as ControlReplyError {
      return error.reason
    } catch {
      return "\(error)"
    }
  }

  /// Canary: a whole line over the cap, its newline included in the same read, is refused
  /// (a reply line and a data-block line alike), not only a line still waiting for its end.
  @Test func refusesACompleteLineLongerThanTheCap() throws {
    let long = String(repeating: "x", count: 100)
    var reply = ControlReplyParser(maximumLineBytes: 64, maximumMessageBytes: 1000)
    reply.append(Array("250-k=\(long)\r\n250 OK\r\n".utf8))
    #expect(Self.reason { _ = try reply.next() } == "line longer than 64 bytes")

    var block = ControlReplyParser(maximumLineBytes: 64, maximumMessageBytes: 1000)
    block.append(Array("250+ns/all=\r\n\(long)\r\n.\r\n250 OK\r\n".utf8))
    #expect(Self.reason { _ = try block.next() } == "line longer than 64 bytes")

    // The control: a line of exactly the cap (CRLF not counted) is read.
    var edge = ControlReplyParser(maximumLineBytes: 64, maximumMessageBytes: 1000)
    let exact = "250-k=" + String(repeating: "x", count: 58)
    edge.append(Array("\(exact)\r\n250 OK\r\n".utf8))
    #expect(try edge.next()?.lines.count == 2)
  }

  /// Canary: a `250+` block with no "." line, fed as a control port sends it (a read at a
  /// time, the parser asked after each), is refused once past the message cap, naming the
  /// block; until then the parser never holds more than the cap and one read.
  @Test func anEndlessDataBlockIsRefusedWithTheParserBounded() {
    let cap = 64 * 1024
    var parser = ControlReplyParser(maximumLineBytes: 1024, maximumMessageBytes: cap)
    parser.append(Array("250+ns/all=\r\n".utf8))
    let read = Array(String(repeating: "r relay 203.0.113.7 9001\r\n", count: 40).utf8)
    var refusal: String?
    var largest = 0
    for _ in 0..<(4 * cap / read.count) where refusal == nil {
      parser.append(read)
      refusal = Self.reason {
        let next = try parser.next()
        #expect(next == nil)
      }
      largest = max(largest, parser.bufferedByteCount)
    }
    #expect(
      refusal
        == "message longer than \(cap) bytes: the data block of \"250+ns/all=\" has no \".\" line")
    #expect(largest <= cap + read.count, "the parser held \(largest) bytes")
  }

  /// Canary: endless `250-` lines stop at a message's line cap, long before their bytes reach
  /// the byte cap; the control: a message of exactly the cap's lines is read.
  @Test func endlessReplyLinesStopAtTheLineCap() throws {
    var endless = ControlReplyParser(maximumMessageLines: 100)
    for _ in 0..<200 { endless.append(Array("250-k=v\r\n".utf8)) }
    #expect(Self.reason { _ = try endless.next() } == "message of more than 100 lines")

    var control = ControlReplyParser(maximumMessageLines: 100)
    for _ in 0..<99 { control.append(Array("250-k=v\r\n".utf8)) }
    control.append(Array("250 OK\r\n".utf8))
    #expect(try control.next()?.lines.count == 100)
  }

  /// The control: a 1 MiB block in 16,384 lines, some dot-stuffed, read 16 KiB at a time
  /// (as the app's control connection reads) under the default caps, parses whole.
  @Test func aLargeLegalDataBlockParsesWhole() throws {
    let lines = (0..<16_384).map { index in
      (index % 100 == 0 ? "." : "r") + String(repeating: "a", count: 59)
        + String(index, radix: 16).leftPadded(to: 4)
    }
    let wire = Array(
      ("250+ns/all=\r\n"
        + lines.map { ($0.hasPrefix(".") ? "." : "") + $0 + "\r\n" }.joined()
        + ".\r\n250 OK\r\n").utf8)
    #expect(wire.count > 1 << 20)
    var parser = ControlReplyParser()
    var message: ControlMessage?
    var offset = 0
    while message == nil, offset < wire.count {
      parser.append(wire[offset..<min(offset + 16_384, wire.count)])
      offset += 16_384
      message = try parser.next()
    }
    #expect(message?.isSuccess == true)
    #expect(message?.value(for: "ns/all") == lines.joined(separator: "\n"))
    #expect(parser.bufferedByteCount == 0)
  }
}

extension String {
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}

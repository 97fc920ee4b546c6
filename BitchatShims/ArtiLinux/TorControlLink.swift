import FailClosedSupport
import Foundation

/// A blocking control-port connection to one tor this process started: cookie authentication,
/// TAKEOWNERSHIP (tor exits when this connection closes, however the app ends), and the two
/// commands the Arti backend needs. Commands and replies only; no events are subscribed.
final class TorControlLink: @unchecked Sendable {
  private let socket: Socket
  private var buffer: [UInt8] = []

  init(address: SocketAddress, cookiePath: String) throws {
    socket = try Socket.connect(to: address, timeout: 5)
    socket.setTimeouts(seconds: 10)
    guard let cookie = FileManager.default.contents(atPath: cookiePath), cookie.count == 32 else {
      throw ArtiTorError("tor's control cookie \(cookiePath) is missing or not 32 bytes")
    }
    let hex = cookie.map { String(format: "%02X", $0) }.joined()
    try expectOK("AUTHENTICATE " + hex, what: "AUTHENTICATE")
    try expectOK("TAKEOWNERSHIP", what: "TAKEOWNERSHIP")
  }

  func close() { socket.close() }

  /// `GETINFO status/bootstrap-phase`'s value.
  func bootstrapPhase() throws -> String {
    let lines = try command("GETINFO status/bootstrap-phase")
    guard lines.last?.hasPrefix("250") == true,
      let value = lines.first(where: { $0.hasPrefix("250-status/bootstrap-phase=") })
    else { throw ArtiTorError("GETINFO status/bootstrap-phase: \(lines.joined(separator: " | "))") }
    return String(value.dropFirst("250-status/bootstrap-phase=".count))
  }

  /// `SETCONF SocksPort=127.0.0.1:PORT`: the listener bound now, or the error tor gave.
  func bindSOCKS(port: UInt16) throws {
    let lines = try command("SETCONF SocksPort=127.0.0.1:\(port)")
    guard lines.last?.hasPrefix("250") == true else {
      throw ArtiTorError(
        "cannot bind 127.0.0.1:\(port): tor answered \(lines.joined(separator: " | "))")
    }
  }

  private func expectOK(_ line: String, what: String) throws {
    let lines = try command(line)
    guard lines.last?.hasPrefix("250") == true else {
      throw ArtiTorError("\(what): tor answered \(lines.joined(separator: " | "))")
    }
  }

  /// Sends one command line; returns the reply's lines (the last one is "NNN text").
  private func command(_ line: String) throws -> [String] {
    try socket.write(Array((line + "\r\n").utf8))
    var lines: [String] = []
    while true {
      let reply = try readLine()
      lines.append(reply)
      // "250-..." and "250+..." continue a reply; "250 ..." ends it.
      let bytes = Array(reply.utf8)
      if bytes.count >= 4, bytes[3] == UInt8(ascii: " ") { return lines }
      if bytes.count < 4 { return lines }
    }
  }

  private func readLine() throws -> String {
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        var line = Array(buffer[..<newline])
        buffer.removeFirst(newline + 1)
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
      }
      // A reply line longer than this is not one this backend asked for.
      guard buffer.count < 65536 else { throw ArtiTorError("tor's control reply line too long") }
      let chunk = try socket.read(max: 4096)
      guard !chunk.isEmpty else { throw ArtiTorError("tor closed its control connection") }
      buffer += chunk
    }
  }
}

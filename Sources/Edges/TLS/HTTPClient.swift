import FailClosedSupport
import HTTPCodec

/// One HTTP/1.1 exchange over a connected stream (a plain socket, or a ``TLSConnection`` that
/// itself may run over a SOCKS tunnel). Blocks: call on a dedicated thread. Deadlines are the
/// stream's own (``TLSConnection/setTimeout(_:)``, ``Socket/setTimeouts(seconds:)``).
public enum HTTPClient {
  /// Writes `request`, reads one whole response (body bounded by `limits`).
  public static func send(
    _ request: HTTPRequest, over stream: any ByteStream, limits: HTTPLimits = HTTPLimits()
  ) throws -> HTTPResponse {
    try stream.write(request.encoded())
    var parser = HTTPResponseParser(requestMethod: request.method, limits: limits)
    var head: HTTPResponseHead?
    var body: [UInt8] = []
    while true {
      let bytes = try stream.read(max: 65536)
      let events = bytes.isEmpty ? try parser.finish() : try parser.parse(bytes)
      for event in events {
        switch event {
        case .head(let received): head = received
        case .body(let piece): body += piece
        case .end:
          guard let head else { continue }
          return HTTPResponse(
            status: head.status, reason: head.reason, headers: head.headers, body: body)
        }
      }
      if bytes.isEmpty {
        throw HTTPCodecError(.truncated("before any response"), offset: 0)
      }
    }
  }
}

/// HTTPS over an already-connected socket: the TLS handshake (verifying the name the request is
/// for), then one exchange, then close. The system under test layers it on its SOCKS client:
/// socket to the SOCKS endpoint, SOCKS CONNECT by hostname, then this.
public struct HTTPSClient: Sendable {
  public let tls: TLSClient

  public init(tls: TLSClient) { self.tls = tls }

  public init(trust: TLSTrust) throws { tls = try TLSClient(trust: trust) }

  /// `serverName` defaults to the request's host without a port. `timeout` bounds the
  /// handshake and each wait for the peer afterwards.
  public func send(
    _ request: HTTPRequest, over socket: Socket, serverName: String? = nil, timeout: Double = 30,
    limits: HTTPLimits = HTTPLimits()
  ) throws -> HTTPResponse {
    let connection = try tls.connect(
      socket, serverName: serverName ?? Self.hostWithoutPort(request.host), timeout: timeout)
    defer { connection.close() }
    connection.setTimeout(timeout)
    return try HTTPClient.send(request, over: connection, limits: limits)
  }

  /// "relay.example:443" -> "relay.example"; "[::1]:443" -> "::1".
  public static func hostWithoutPort(_ host: String) -> String {
    if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
      return String(host[host.index(after: host.startIndex)..<close])
    }
    if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
      return String(host[..<colon])
    }
    return host
  }
}

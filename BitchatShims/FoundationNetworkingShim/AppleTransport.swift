import FailClosedSupport
import Foundation
import FoundationNetworking
import HTTPCodec
import SOCKS
import TLS

/// The `apple` transport's settings: trust anchors for TLS (the harness's test CA; Debian's
/// store by default). Certificates and host names are always verified, as Apple's are.
public enum AppleTransportSettings {
  nonisolated(unsafe) public static var trust: TLSTrust = .system {
    didSet { client.update { $0 = nil } }
  }
  static let client = LockedValue<TLSClient?>(nil)

  static func tlsClient() throws -> TLSClient {
    try client.update { current in
      if let current { return current }
      let made = try TLSClient(trust: trust)
      current = made
      return made
    }
  }
}

final class LockedValue<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value
  init(_ value: Value) { self.value = value }
  func update<T>(_ body: (inout Value) throws -> T) rethrows -> T {
    try lock.withLock { try body(&value) }
  }
}

/// scheme://host[:port]/path?query of an http(s)/ws(s) URL.
struct TransportTarget {
  let secure: Bool
  let host: String
  let port: UInt16
  let path: String

  init?(_ url: URL) {
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
      let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty
    else { return nil }
    switch scheme {
    case "https", "wss": secure = true
    case "http", "ws": secure = false
    default: return nil
    }
    self.host = host
    port = UInt16(components.port ?? (secure ? 443 : 80))
    var path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    if let query = components.percentEncodedQuery { path += "?" + query }
    self.path = path
  }

  var hostHeader: String {
    (secure && port == 443) || (!secure && port == 80) ? host : "\(host):\(port)"
  }
}

/// Apple's stack as bitchat's sessions use it: with a SOCKS proxy in connectionProxyDictionary,
/// one TCP connection to the proxy and a SOCKS5 CONNECT carrying the host name (the proxy
/// resolves it; no local DNS); without, the system resolver and a direct connection; then TLS
/// with certificate and host-name checks for https/wss. Blocking: call on a dedicated thread.
enum AppleStreamOpener {
  static func open(
    _ target: TransportTarget, configuration: URLSessionConfiguration, timeout: Double,
    purpose: String
  )
    throws -> any ByteStream
  {
    let socket: Socket
    if let proxy = configuration.socksProxy {
      guard let address = SocketAddress(host: proxy.host, port: proxy.port) else {
        throw URLError(.cannotConnectToHost)
      }
      do {
        socket = try Socket.connect(to: address, timeout: timeout)
      } catch {
        // Apple: the proxy refusing is "could not connect to the server".
        throw URLError(.cannotConnectToHost)
      }
      BitchatNetworkEvents.record(
        "socket",
        [
          "endpoint": address.description, "transport": "tor",
          "target": "\(target.host):\(target.port)", "purpose": purpose,
        ])
      socket.setTimeouts(seconds: timeout)
      do {
        try SOCKSConnect.handshake(on: socket, host: target.host, port: target.port)
      } catch {
        socket.close()
        throw error
      }
    } else {
      socket = try DirectConnect.open(
        host: target.host, port: target.port, timeout: timeout, purpose: purpose)
    }
    guard target.secure else { return socket }
    do {
      let connection = try AppleTransportSettings.tlsClient().connect(
        socket, serverName: target.host, timeout: timeout)
      connection.setTimeout(timeout)
      return connection
    } catch {
      socket.close()
      // Apple: a certificate that does not verify is NSURLErrorServerCertificateUntrusted
      // (-1202); other handshake failures are secureConnectionFailed (-1200).
      throw URLError(.secureConnectionFailed)
    }
  }
}

enum DirectConnect {
  static func open(host: String, port: UInt16, timeout: Double, purpose: String) throws -> Socket {
    var addresses: [SocketAddress] = []
    if let literal = SocketAddress(host: host, port: port) {
      addresses = [literal]
    } else {
      var hints = addrinfo()
      hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
      hints.ai_family = AF_UNSPEC
      var result: UnsafeMutablePointer<addrinfo>?
      guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else {
        throw URLError(.cannotFindHost)
      }
      defer { freeaddrinfo(first) }
      var cursor: UnsafeMutablePointer<addrinfo>? = first
      while let info = cursor {
        if let sockaddr = info.pointee.ai_addr {
          var storage = sockaddr_storage()
          withUnsafeMutableBytes(of: &storage) { raw in
            raw.copyMemory(
              from: UnsafeRawBufferPointer(start: sockaddr, count: Int(info.pointee.ai_addrlen)))
          }
          if let address = SocketAddress(storage: storage) { addresses.append(address) }
        }
        cursor = info.pointee.ai_next
      }
    }
    for address in addresses {
      if let socket = try? Socket.connect(to: address, timeout: timeout) {
        BitchatNetworkEvents.record(
          "socket",
          [
            "endpoint": address.description, "transport": "direct",
            "target": "\(host):\(port)", "purpose": purpose,
          ])
        socket.setTimeouts(seconds: timeout)
        return socket
      }
    }
    throw URLError(.cannotConnectToHost)
  }
}

enum SOCKSConnect {
  /// SOCKS5 CONNECT with the host name (ATYP 3); an IP literal goes as an address.
  static func handshake(on socket: Socket, host: String, port: UInt16) throws {
    let target: SOCKSAddress
    if let bytes = SocketAddress.parseIP(host) {
      target = bytes.count == 4 ? .ipv4(bytes) : .ipv6(bytes)
    } else {
      target = .hostname(host)
    }
    var handshake = try SOCKSClientHandshake(target: target, port: port)
    var buffer: [UInt8] = []
    try socket.write(handshake.greeting())
    for _ in 0..<16 {
      let chunk = try socket.read(max: 512)
      guard !chunk.isEmpty else { throw URLError(.networkConnectionLost) }
      buffer += chunk
      while true {
        let action = handshake.handle(buffer)
        buffer.removeFirst(action.consumed)
        if !action.send.isEmpty { try socket.write(action.send) }
        switch action.outcome {
        case .finished: return
        case .failed: throw URLError(.cannotConnectToHost)
        case .needMoreInput: break
        case .continueHandshake:
          if !buffer.isEmpty { continue }
        }
        break
      }
    }
    throw URLError(.cannotConnectToHost)
  }
}

/// One HTTP/1.1 request the way Apple's session sends it for bitchat (GET, the request's
/// timeout), on a dedicated thread.
enum AppleHTTPTransport {
  static func fetch(_ request: URLRequest, configuration: URLSessionConfiguration) async throws
    -> (Data, URLResponse)
  {
    guard let url = request.url, let target = TransportTarget(url) else {
      throw URLError(.unsupportedURL)
    }
    let timeout =
      request.timeoutInterval > 0
      ? request.timeoutInterval : configuration.timeoutIntervalForRequest
    return try await withCheckedThrowingContinuation { continuation in
      Thread.detachNewThread {
        do {
          let stream = try AppleStreamOpener.open(
            target, configuration: configuration, timeout: timeout, purpose: "fetch")
          defer { stream.close() }
          var fields: [(name: String, value: String)] = [
            ("Accept", "*/*"), ("Connection", "close"),
          ]
          for (name, value) in request.allHTTPHeaderFields ?? [:] { fields.append((name, value)) }
          let httpRequest = HTTPRequest(
            method: request.httpMethod ?? "GET", target: target.path, host: target.hostHeader,
            headers: HTTPHeaders(fields), body: Array(request.httpBody ?? Data()))
          let response: HTTPResponse
          do {
            response = try HTTPClient.send(
              httpRequest, over: stream, limits: HTTPLimits(maxBodyBytes: 16 << 20))
          } catch {
            throw URLError(.networkConnectionLost)
          }
          var responseFields: [String: String] = [:]
          for field in response.headers { responseFields[field.name] = field.value }
          let urlResponse = HTTPURLResponse(
            url: url, statusCode: response.status, httpVersion: "HTTP/1.1",
            headerFields: responseFields)!
          continuation.resume(returning: (Data(response.body), urlResponse))
        } catch {
          continuation.resume(throwing: error)
        }
      }
    }
  }
}

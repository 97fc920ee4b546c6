import FailClosedSupport
import Foundation
import SOCKS

/// Opens a TCP byte stream to host:port over one route. Blocking: call on a dedicated thread.
public protocol StreamConnector: Sendable {
  var route: Route { get }
  func open(host: String, port: UInt16, timeout: Double, purpose: String) throws(NetworkFailure)
    -> Socket
}

/// The Tor route: the only socket it can open is to the SOCKS endpoint, and the destination
/// travels as a hostname inside the SOCKS5 CONNECT, so the name is resolved by Tor, never here.
public struct TorStreamConnector: StreamConnector {
  public let socksEndpoint: SocketAddress
  private let log: AppEventLog

  public init(socksEndpoint: SocketAddress, log: AppEventLog) {
    self.socksEndpoint = socksEndpoint
    self.log = log
  }

  public var route: Route { .tor }

  public func open(host: String, port: UInt16, timeout: Double, purpose: String)
    throws(NetworkFailure) -> Socket
  {
    let socket: Socket
    do {
      socket = try Socket.connect(to: socksEndpoint, timeout: timeout)
    } catch {
      throw .connection("SOCKS proxy \(socksEndpoint): \(error)")
    }
    log.record(
      .socket,
      [
        "endpoint": .string(socksEndpoint.description), "transport": "tor",
        "target": .string("\(host):\(port)"), "purpose": .string(purpose),
      ])
    socket.setTimeouts(seconds: timeout)
    do {
      try Self.handshake(on: socket, host: host, port: port)
    } catch {
      socket.close()
      throw error
    }
    return socket
  }

  /// SOCKS5 CONNECT with the hostname (ATYP 3); an IP literal goes as an address.
  static func handshake(on socket: Socket, host: String, port: UInt16) throws(NetworkFailure) {
    let target: SOCKSAddress
    if let bytes = SocketAddress.parseIP(host) {
      target = bytes.count == 4 ? .ipv4(bytes) : .ipv6(bytes)
    } else {
      target = .hostname(host)
    }
    var handshake: SOCKSClientHandshake
    do {
      handshake = try SOCKSClientHandshake(target: target, port: port)
    } catch {
      throw .connection("SOCKS request for \(host): \(error)")
    }
    var buffer: [UInt8] = []
    do {
      try socket.write(handshake.greeting())
      for _ in 0..<16 {
        let chunk = try socket.read(max: 512)
        guard !chunk.isEmpty else { throw NetworkFailure.connection("SOCKS proxy closed") }
        buffer += chunk
        while true {
          let action = handshake.handle(buffer)
          buffer.removeFirst(action.consumed)
          if !action.send.isEmpty { try socket.write(action.send) }
          switch action.outcome {
          case .finished: return
          case .failed(let error):
            if case .rejected(let code) = error.kind {
              throw NetworkFailure.connection("SOCKS \(code.rawValue): \(code)")
            }
            throw NetworkFailure.connection("SOCKS: \(error)")
          case .needMoreInput: break
          case .continueHandshake:
            if !buffer.isEmpty { continue }
          }
          break
        }
      }
      throw NetworkFailure.connection("SOCKS handshake did not finish")
    } catch let failure as NetworkFailure {
      throw failure
    } catch {
      throw .connection("SOCKS: \(error)")
    }
  }
}

/// The direct route: the system resolver (getaddrinfo), then TCP to the first address. What
/// turning Tor off means.
public struct DirectStreamConnector: StreamConnector {
  private let log: AppEventLog

  public init(log: AppEventLog) { self.log = log }

  public var route: Route { .direct }

  public func open(host: String, port: UInt16, timeout: Double, purpose: String)
    throws(NetworkFailure) -> Socket
  {
    let addresses = try Self.resolve(host, port: port)
    var lastError = ""
    for address in addresses {
      do {
        let socket = try Socket.connect(to: address, timeout: timeout)
        log.record(
          .socket,
          [
            "endpoint": .string(address.description), "transport": "direct",
            "target": .string("\(host):\(port)"), "purpose": .string(purpose),
          ])
        socket.setTimeouts(seconds: timeout)
        return socket
      } catch {
        lastError = "\(error)"
      }
    }
    throw .connection("\(host):\(port): \(lastError)")
  }

  /// getaddrinfo, TCP, IPv4 and IPv6 in the resolver's order.
  static func resolve(_ host: String, port: UInt16) throws(NetworkFailure) -> [SocketAddress] {
    if let address = SocketAddress(host: host, port: port) { return [address] }
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_family = AF_UNSPEC
    var result: UnsafeMutablePointer<addrinfo>?
    let status = getaddrinfo(host, String(port), &hints, &result)
    guard status == 0, let first = result else {
      throw .dns("\(host): \(String(cString: gai_strerror(status)))")
    }
    defer { freeaddrinfo(first) }
    var addresses: [SocketAddress] = []
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
    guard !addresses.isEmpty else { throw .dns("\(host): no addresses") }
    return addresses
  }
}

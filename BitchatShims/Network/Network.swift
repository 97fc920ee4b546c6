// The subset of Apple's Network framework that bitchat's Tor layer uses, for Linux.
// NWConnection follows Apple's state machine for TCP: setup -> preparing -> ready; a refused
// or unreachable connect does not fail the connection but leaves it in `.waiting(error)`
// (Apple keeps retrying when the path changes; a waiting connection only ends when cancelled),
// so a caller that waits for `.failed` waits for its own timeout, as on an iPhone. Handlers
// run on the queue given to start(queue:). NWPathMonitor reports the harness's path: the
// driver calls NWPathMonitor.simulatePathChange(_:) for a scenario's path change.
import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

public enum NWError: Error, Equatable, CustomDebugStringConvertible {
  case posix(POSIXErrorCode)
  case dns(Int32)
  case tls(Int32)

  public var debugDescription: String {
    switch self {
    case .posix(let code): return "POSIXErrorCode(rawValue: \(code.rawValue))"
    case .dns(let code): return "DNS error \(code)"
    case .tls(let code): return "TLS error \(code)"
    }
  }
}

public struct IPv4Address: Hashable, CustomDebugStringConvertible {
  public let rawValue: Data
  public static let loopback = IPv4Address(bytes: [127, 0, 0, 1])
  public static let any = IPv4Address(bytes: [0, 0, 0, 0])
  init(bytes: [UInt8]) { rawValue = Data(bytes) }
  public init?(_ string: String) {
    let parts = string.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return nil }
    var bytes: [UInt8] = []
    for part in parts {
      guard let byte = UInt8(part) else { return nil }
      bytes.append(byte)
    }
    rawValue = Data(bytes)
  }
  public var debugDescription: String { rawValue.map(String.init).joined(separator: ".") }
}

public struct IPv6Address: Hashable, CustomDebugStringConvertible {
  public let rawValue: Data
  public static let loopback = IPv6Address(rawValue: Data(repeating: 0, count: 15) + Data([1]))
  init(rawValue: Data) { self.rawValue = rawValue }
  public init?(_ string: String) {
    var address = in6_addr()
    guard inet_pton(AF_INET6, string, &address) == 1 else { return nil }
    rawValue = withUnsafeBytes(of: &address) { Data($0) }
  }
  public var debugDescription: String {
    var address = in6_addr()
    _ = withUnsafeMutableBytes(of: &address) { rawValue.copyBytes(to: $0) }
    var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
    inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
    return String(cString: buffer)
  }
}

public enum NWEndpoint: Hashable, CustomDebugStringConvertible {
  case hostPort(host: Host, port: Port)

  public enum Host: Hashable, CustomDebugStringConvertible {
    case name(String, NWInterface?)
    case ipv4(IPv4Address)
    case ipv6(IPv6Address)

    public init(_ string: String) {
      if let v4 = IPv4Address(string) {
        self = .ipv4(v4)
      } else if let v6 = IPv6Address(string) {
        self = .ipv6(v6)
      } else {
        self = .name(string, nil)
      }
    }

    public var debugDescription: String {
      switch self {
      case .name(let name, _): return name
      case .ipv4(let address): return address.debugDescription
      case .ipv6(let address): return address.debugDescription
      }
    }
  }

  public struct Port: Hashable, RawRepresentable, ExpressibleByIntegerLiteral,
    CustomDebugStringConvertible
  {
    public let rawValue: UInt16
    public init?(rawValue: UInt16) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt16) { rawValue = value }
    /// A decimal port ("9050"); nil for anything else (Onion Browser 3.X's TorManager reads
    /// GETINFO net/listeners/socks with it).
    public init?(_ string: String) {
      guard let value = UInt16(string) else { return nil }
      rawValue = value
    }
    public static let https: Port = 443
    public static let http: Port = 80
    public var debugDescription: String { String(rawValue) }
  }

  public var debugDescription: String {
    switch self {
    case .hostPort(let host, let port): return "\(host.debugDescription):\(port.rawValue)"
    }
  }
}

public struct NWInterface: Hashable {
  public enum InterfaceType: Hashable { case other, wifi, cellular, wiredEthernet, loopback }
  public let name: String
  public let type: InterfaceType
}

public final class NWParameters {
  public enum ProtocolKind { case tcp, udp }
  let kind: ProtocolKind
  init(kind: ProtocolKind) { self.kind = kind }
  public static var tcp: NWParameters { NWParameters(kind: .tcp) }
  public static var udp: NWParameters { NWParameters(kind: .udp) }
}

/// A TCP connection with Apple's states. Only what bitchat uses: connect, the states, cancel.
public final class NWConnection: @unchecked Sendable {
  public enum State: Equatable {
    case setup
    case waiting(NWError)
    case preparing
    case ready
    case failed(NWError)
    case cancelled
  }

  public let endpoint: NWEndpoint
  public let parameters: NWParameters
  private let lock = NSLock()
  private var handler: ((State) -> Void)?
  private var currentState: State = .setup
  private var queue: DispatchQueue?
  private var descriptor: Int32 = -1

  public init(to endpoint: NWEndpoint, using parameters: NWParameters) {
    self.endpoint = endpoint
    self.parameters = parameters
  }

  public convenience init(host: NWEndpoint.Host, port: NWEndpoint.Port, using: NWParameters) {
    self.init(to: .hostPort(host: host, port: port), using: using)
  }

  public var stateUpdateHandler: ((State) -> Void)? {
    get { lock.withLock { handler } }
    set { lock.withLock { handler = newValue } }
  }

  public var state: State { lock.withLock { currentState } }

  public func start(queue: DispatchQueue) {
    lock.withLock { self.queue = queue }
    transition(to: .preparing)
    // The connect blocks; it runs on its own thread, never on the caller's queue.
    Thread.detachNewThread { [self] in connectOnce() }
  }

  public func cancel() {
    let fd: Int32 = lock.withLock {
      let fd = descriptor
      descriptor = -1
      return fd
    }
    if fd >= 0 { close(fd) }
    transition(to: .cancelled)
  }

  /// Moves to `state` unless the connection is already cancelled or failed (terminal), and
  /// tells the handler on the connection's queue.
  private func transition(to state: State) {
    let target: (DispatchQueue, ((State) -> Void)?)? = lock.withLock {
      switch currentState {
      case .cancelled, .failed: return nil
      default: break
      }
      if currentState == state { return nil }
      currentState = state
      return queue.map { ($0, handler) }
    }
    guard let (queue, handler) = target, let handler else { return }
    queue.async { handler(state) }
  }

  private func connectOnce() {
    guard case .hostPort(let host, let port) = endpoint else { return }
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = AI_NUMERICSERV
    var result: UnsafeMutablePointer<addrinfo>?
    let name = host.debugDescription
    let status = getaddrinfo(name, String(port.rawValue), &hints, &result)
    guard status == 0, let first = result else {
      transition(to: .waiting(.dns(status)))
      return
    }
    defer { freeaddrinfo(result) }
    let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else {
      transition(to: .failed(.posix(POSIXErrorCode(rawValue: errno) ?? .EIO)))
      return
    }
    let proceed: Bool = lock.withLock {
      if currentState == .cancelled { return false }
      descriptor = fd
      return true
    }
    guard proceed else {
      close(fd)
      return
    }
    let connected = connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0
    if connected, Self.isSelfConnection(fd, port: port.rawValue) {
      let owned: Bool = lock.withLock {
        guard descriptor == fd else { return false }
        descriptor = -1
        return true
      }
      if owned { Self.dropSelfConnection(fd) }
      transition(to: .waiting(.posix(.ECONNREFUSED)))
    } else if connected {
      transition(to: .ready)
    } else {
      // Apple: a refused or unreachable TCP connect leaves the connection waiting for a
      // better path; it does not fail.
      let code = POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED
      transition(to: .waiting(.posix(code)))
    }
  }
}

extension NWConnection {
  /// A connect that reached itself is refused, as on Apple, where no socket is left behind:
  /// kept open, it holds the port, and whoever binds it next (Arti, the mock) never can. An
  /// ordinary close would leave it in TIME_WAIT, holding the port 60 s more: closed with a
  /// reset instead (SO_LINGER 0).
  static func dropSelfConnection(_ fd: Int32) {
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    close(fd)
  }

  /// Linux's ephemeral ports (32768-60999) include bitchat's 39050, so a connect to an unbound
  /// loopback port can pick it as its own source port and connect to itself (TCP simultaneous
  /// open). Darwin's ephemeral range (49152-65535) cannot, so on Apple that connect is refused:
  /// the shim reports it as refused too.
  static func isSelfConnection(_ fd: Int32, port: UInt16) -> Bool {
    var local = sockaddr_storage()
    var peer = sockaddr_storage()
    var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
    var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let gotLocal = withUnsafeMutablePointer(to: &local) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) }
    }
    let gotPeer = withUnsafeMutablePointer(to: &peer) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &peerLength) }
    }
    guard gotLocal == 0, gotPeer == 0, localLength == peerLength else { return false }
    // The same address and port on both ends: the socket is connected to itself.
    return withUnsafeBytes(of: &local) { a in
      withUnsafeBytes(of: &peer) { b in
        a.prefix(Int(localLength)).elementsEqual(b.prefix(Int(peerLength)))
      }
    }
  }

}

public struct NWPath: Equatable {
  public enum Status: Equatable { case satisfied, unsatisfied, requiresConnection }
  public let status: Status
  public var isExpensive: Bool { false }
  public var isConstrained: Bool { false }
  public init(status: Status) { self.status = status }
}

/// Path updates come from the harness (NWPathMonitor.simulatePathChange); like Apple's, a
/// started monitor reports the current path once at start, then each change, on its queue.
public final class NWPathMonitor: @unchecked Sendable {
  private static let registry = MonitorRegistry()

  private let lock = NSLock()
  private var handler: ((NWPath) -> Void)?
  private var queue: DispatchQueue?
  public private(set) var currentPath = NWPath(status: .satisfied)

  public init() {}

  public var pathUpdateHandler: ((NWPath) -> Void)? {
    get { lock.withLock { handler } }
    set { lock.withLock { handler = newValue } }
  }

  public func start(queue: DispatchQueue) {
    lock.withLock { self.queue = queue }
    NWPathMonitor.registry.add(self)
    deliver(NWPathMonitor.registry.path)
  }

  public func cancel() {
    NWPathMonitor.registry.remove(self)
    lock.withLock { queue = nil }
  }

  func deliver(_ path: NWPath) {
    let target: (DispatchQueue, (NWPath) -> Void)? = lock.withLock {
      currentPath = path
      guard let queue, let handler else { return nil }
      return (queue, handler)
    }
    guard let (queue, handler) = target else { return }
    queue.async { handler(path) }
  }

  /// The harness's hook: the device's path changed; every started monitor hears it.
  public static func simulatePathChange(_ status: NWPath.Status) {
    registry.change(NWPath(status: status))
  }
}

final class MonitorRegistry: @unchecked Sendable {
  private let lock = NSLock()
  private var monitors: [ObjectIdentifier: NWPathMonitor] = [:]
  private var currentPath = NWPath(status: .satisfied)

  var path: NWPath { lock.withLock { currentPath } }

  func add(_ monitor: NWPathMonitor) {
    lock.withLock { monitors[ObjectIdentifier(monitor)] = monitor }
  }
  func remove(_ monitor: NWPathMonitor) {
    lock.withLock { _ = monitors.removeValue(forKey: ObjectIdentifier(monitor)) }
  }
  func change(_ path: NWPath) {
    let current = lock.withLock {
      currentPath = path
      return Array(monitors.values)
    }
    for monitor in current { monitor.deliver(path) }
  }
}

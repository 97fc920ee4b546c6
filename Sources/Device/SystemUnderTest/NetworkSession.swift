/// How a request or socket leaves the device.
public enum Route: String, Sendable {
  /// SOCKS5 to Tor's port, hostname sent to the proxy (the project's own transport).
  case tor
  /// The system resolver, then TCP: what turning Tor off means.
  case direct
  /// Foundation's URLSession with bitchat's SOCKS dictionary, which Linux ignores (a canary).
  case naive
}

/// Why a request or relay connection failed. `dns` and `badServerResponse` are what bitchat
/// treats as permanent relay failures.
public enum NetworkFailure: Error, Equatable, Sendable, CustomStringConvertible {
  case dns(String)
  case badServerResponse(String)
  case timedOut
  case cancelled
  case connection(String)

  public var description: String {
    switch self {
    case .dns(let detail): return "dns: \(detail)"
    case .badServerResponse(let detail): return "bad server response: \(detail)"
    case .timedOut: return "timed out"
    case .cancelled: return "cancelled"
    case .connection(let detail): return "connection: \(detail)"
    }
  }

  public var isPermanentForRelays: Bool {
    switch self {
    case .dns, .badServerResponse: return true
    default: return false
    }
  }
}

/// A fetched HTTP response: status, the URL actually answered, the body.
public struct FetchedResponse: Sendable, Equatable {
  public var status: Int
  public var url: String
  public var body: [UInt8]
  public init(status: Int, url: String, body: [UInt8]) {
    self.status = status
    self.url = url
    self.body = body
  }
}

/// Something in flight that can be cancelled (a URLSessionTask).
@AppActor public protocol SessionTask: AnyObject {
  func cancel()
}

/// What happens on a relay socket.
public enum RelayConnectionEvent: Sendable, Equatable {
  /// The socket is up and answered a ping.
  case connected
  case message(String)
  /// The socket failed or closed.
  case failed(NetworkFailure)
}

/// A WebSocket to a relay (URLSessionWebSocketTask in bitchat).
@AppActor public protocol RelayConnection: SessionTask {
  /// Opens the socket; events arrive on the app actor until `.failed` or cancel().
  func resume(events: @escaping @AppActor (RelayConnectionEvent) -> Void)
  func send(_ text: String, completion: @escaping @AppActor (Bool) -> Void)
}

/// A URLSession: GETs and WebSockets over one route.
@AppActor public protocol NetworkSession: AnyObject {
  var route: Route { get }
  /// GET `url` with a timeout; completes on the app actor.
  @discardableResult
  func fetch(
    _ url: String, timeout: Double,
    completion: @escaping @AppActor (Result<FetchedResponse, NetworkFailure>) -> Void
  ) -> SessionTask
  func webSocketTask(_ url: String) -> RelayConnection
  /// Cancels every task of this session (invalidateAndCancel).
  func invalidateAndCancel()
}

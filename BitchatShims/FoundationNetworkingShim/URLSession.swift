import Foundation
import FoundationNetworking

/// Which network stack the shimmed URLSession uses (chosen once, by the driver).
public enum BitchatTransport: String, Sendable, CaseIterable {
  /// What Apple's URLSession does: connectionProxyDictionary's SOCKS proxy with the host name
  /// sent to it (no local DNS), TLS with certificate checks, WebSocket tasks.
  case apple
  /// Stock swift-corelibs URLSession: ignores the proxy settings (a canary).
  case linuxFoundation = "linux-foundation"

  nonisolated(unsafe) public static var current: BitchatTransport = .apple
}

/// What the sessions did, for the driver's event stream: (type, fields).
public enum BitchatNetworkEvents {
  nonisolated(unsafe) public static var record: @Sendable (String, [String: String]) -> Void = {
    _, _ in
  }
}

/// Apple's URLSession, as far as bitchat's Tor layer uses it.
open class URLSession: @unchecked Sendable {
  public let configuration: URLSessionConfiguration
  private let lock = NSLock()
  private var invalidated = false
  private var foundationSession: FoundationNetworking.URLSession?
  private var tasks: [ObjectIdentifier: URLSessionWebSocketTask] = [:]

  public init(configuration: URLSessionConfiguration) {
    self.configuration = configuration
  }

  public static let shared = URLSession(configuration: .default)

  var route: String {
    if BitchatTransport.current == .linuxFoundation { return "naive" }
    return configuration.socksProxy == nil ? "direct" : "tor"
  }

  func stockSession() -> FoundationNetworking.URLSession {
    lock.withLock {
      if let session = foundationSession { return session }
      let session = FoundationNetworking.URLSession(
        configuration: configuration.foundationConfiguration())
      foundationSession = session
      return session
    }
  }

  var isInvalidated: Bool { lock.withLock { invalidated } }

  /// The response's bytes (Apple: URLSession.AsyncBytes). The body is read before the first
  /// byte is handed out; bitchat reads it to the end or stops at its size cap.
  public struct AsyncBytes: AsyncSequence, Sendable {
    public typealias Element = UInt8
    let data: Data
    public struct AsyncIterator: AsyncIteratorProtocol {
      var iterator: Data.Iterator
      public mutating func next() async throws -> UInt8? { iterator.next() }
    }
    public func makeAsyncIterator() -> AsyncIterator {
      AsyncIterator(iterator: data.makeIterator())
    }
  }

  public func bytes(for request: URLRequest, delegate: AnyObject? = nil) async throws -> (
    AsyncBytes, URLResponse
  ) {
    let (data, response) = try await data(for: request)
    return (AsyncBytes(data: data), response)
  }

  public func data(for request: URLRequest, delegate: AnyObject? = nil) async throws -> (
    Data, URLResponse
  ) {
    let url = request.url?.absoluteString ?? ""
    let via = route
    BitchatNetworkEvents.record("request", ["url": url, "via": via, "phase": "start"])
    do {
      if isInvalidated { throw URLError(.cancelled) }
      let result: (Data, URLResponse)
      switch BitchatTransport.current {
      case .linuxFoundation:
        result = try await stockSession().data(for: request)
      case .apple:
        result = try await AppleHTTPTransport.fetch(request, configuration: configuration)
      }
      let status = (result.1 as? HTTPURLResponse)?.statusCode ?? 0
      BitchatNetworkEvents.record(
        "request", ["url": url, "via": via, "phase": "done", "status": String(status)])
      return result
    } catch {
      BitchatNetworkEvents.record(
        "request", ["url": url, "via": via, "phase": "failed", "error": "\(error)"])
      throw error
    }
  }

  public func webSocketTask(with url: URL) -> URLSessionWebSocketTask {
    let task = URLSessionWebSocketTask(url: url, session: self)
    lock.withLock { tasks[ObjectIdentifier(task)] = task }
    if isInvalidated { task.cancel() }
    return task
  }

  func forget(_ task: URLSessionWebSocketTask) {
    lock.withLock { _ = tasks.removeValue(forKey: ObjectIdentifier(task)) }
  }

  public func invalidateAndCancel() {
    let all: [URLSessionWebSocketTask] = lock.withLock {
      invalidated = true
      defer { tasks.removeAll() }
      return Array(tasks.values)
    }
    for task in all { task.cancel() }
    foundationSession?.invalidateAndCancel()
  }

  public func finishTasksAndInvalidate() {
    lock.withLock { invalidated = true }
    foundationSession?.finishTasksAndInvalidate()
  }
}

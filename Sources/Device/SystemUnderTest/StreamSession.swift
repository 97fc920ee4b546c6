import FailClosedSupport
import Foundation
import HTTPCodec
import TLS

/// A NetworkSession built from a ``StreamConnector`` (Tor or direct), OpenSSL TLS with
/// certificate and hostname verification, HTTP/1.1 and RFC 6455 WebSocket. Blocking work runs
/// on dedicated threads; results come back on the app actor.
@AppActor public final class StreamSession: NetworkSession {
  public nonisolated let connector: any StreamConnector
  private let tls: TLSClient?
  private let log: AppEventLog
  /// Virtual seconds per real second, so a 15 s virtual timeout is 15/scale real seconds.
  private let timeScale: Double
  private var tasks: [ObjectIdentifier: SessionTask] = [:]
  private var invalidated = false

  /// `tls` is shared between sessions: making one loads the trust store, which is slow.
  public init(connector: any StreamConnector, tls: TLSClient?, log: AppEventLog, timeScale: Double)
  {
    self.connector = connector
    self.tls = tls
    self.log = log
    self.timeScale = max(timeScale, 1e-6)
  }

  public nonisolated var route: Route { connector.route }

  func realSeconds(_ virtual: Double) -> Double { max(virtual / timeScale, 0.05) }

  @discardableResult
  public func fetch(
    _ url: String, timeout: Double,
    completion: @escaping @AppActor (Result<FetchedResponse, NetworkFailure>) -> Void
  ) -> SessionTask {
    let task = StreamFetchTask()
    tasks[ObjectIdentifier(task)] = task
    let route = self.route.rawValue
    log.record(.request, ["url": .string(url), "via": .string(route), "phase": "start"])
    let finish: @AppActor (Result<FetchedResponse, NetworkFailure>) -> Void = { result in
      self.tasks[ObjectIdentifier(task)] = nil
      switch result {
      case .success(let response):
        self.log.record(
          .request,
          [
            "url": .string(url), "via": .string(route), "phase": "done",
            "status": .int(response.status),
          ])
      case .failure(let failure):
        self.log.record(
          .request,
          [
            "url": .string(url), "via": .string(route), "phase": "failed",
            "error": .string("\(failure)"),
          ])
      }
      completion(result)
    }
    task.onFinish = finish
    if invalidated {
      task.complete(.failure(.cancelled))
      return task
    }
    guard let target = HTTPTarget(url) else {
      task.complete(.failure(.badServerResponse("unsupported URL \(url)")))
      return task
    }
    let connector = self.connector
    let tls = self.tls
    let seconds = realSeconds(timeout)
    BlockingIO.detach("failclosed.fetch") {
      // Its timeouts are real (the kernel's): on the event clock the time runs at the scale meanwhile.
      let hold = RunClockHold.begin()
      let result: Result<FetchedResponse, NetworkFailure>
      do {
        let stream = try HTTPStream.open(
          target, connector: connector, tls: tls, timeout: seconds, purpose: "fetch",
          register: { task.attach($0) })
        defer { stream.close() }
        result = .success(try HTTPStream.get(target, on: stream, url: url))
      } catch let failure as NetworkFailure {
        result = .failure(failure)
      } catch {
        result = .failure(.connection("\(error)"))
      }
      Task { @AppActor in task.complete(result) }
      RunClockHold.end(hold)
    }
    return task
  }

  public func webSocketTask(_ url: String) -> RelayConnection {
    let connection = StreamRelayConnection(
      url: url, connector: connector, tls: tls,
      timeout: realSeconds(StreamRelayConnection.requestTimeout), log: log)
    tasks[ObjectIdentifier(connection)] = connection
    if invalidated { connection.cancel() }
    return connection
  }

  public func invalidateAndCancel() {
    invalidated = true
    let all = tasks.values
    tasks.removeAll()
    for task in all { task.cancel() }
  }
}

/// scheme://host[:port]/path?query of an http(s)/ws(s) URL.
struct HTTPTarget: Sendable {
  let secure: Bool
  let host: String
  let port: UInt16
  let path: String

  init?(_ url: String) {
    guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
      let host = components.host, !host.isEmpty
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

/// Blocking HTTP/1.1 over a connector: open (TCP, then TLS), GET, read to the end.
enum HTTPStream {
  static func open(
    _ target: HTTPTarget, connector: any StreamConnector, tls: TLSClient?, timeout: Double,
    purpose: String, register: (any ByteStream) -> Void
  ) throws -> any ByteStream {
    let socket = try connector.open(
      host: target.host, port: target.port, timeout: timeout, purpose: purpose)
    register(socket)
    guard target.secure else { return socket }
    guard let tls else {
      socket.close()
      throw NetworkFailure.connection("TLS unavailable")
    }
    do {
      let connection = try tls.connect(socket, serverName: target.host, timeout: timeout)
      register(connection)
      return connection
    } catch {
      socket.close()
      throw NetworkFailure.connection("TLS with \(target.host): \(error)")
    }
  }

  static func get(_ target: HTTPTarget, on stream: any ByteStream, url: String) throws
    -> FetchedResponse
  {
    let request = HTTPRequest(
      method: "GET", target: target.path, host: target.hostHeader,
      headers: ["Accept": "*/*", "Cache-Control": "no-cache", "Connection": "close"])
    try stream.write(try request.encoded())
    var parser = HTTPResponseParser(requestMethod: "GET")
    var status = 0
    var body: [UInt8] = []
    var done = false
    while !done {
      let chunk = try stream.read(max: 65536)
      let events = chunk.isEmpty ? try parser.finish() : try parser.parse(chunk)
      for event in events {
        switch event {
        case .head(let head): status = head.status
        case .body(let bytes):
          body += bytes
          if body.count > 512 * 1024 { throw NetworkFailure.badServerResponse("body too large") }
        case .end: done = true
        }
      }
      if chunk.isEmpty && !done { throw NetworkFailure.connection("closed before the end") }
    }
    return FetchedResponse(status: status, url: url, body: body)
  }
}

/// A fetch in flight: cancelling closes its socket and completes with `.cancelled`.
@AppActor final class StreamFetchTask: SessionTask {
  var onFinish: (@AppActor (Result<FetchedResponse, NetworkFailure>) -> Void)?
  private let streams = StreamBox()

  nonisolated func attach(_ stream: any ByteStream) { streams.add(stream) }

  func complete(_ result: Result<FetchedResponse, NetworkFailure>) {
    let finish = onFinish
    onFinish = nil
    finish?(result)
  }

  func cancel() {
    streams.closeAll()
    complete(.failure(.cancelled))
  }
}

/// Streams to close on cancel, shared with the blocking thread.
final class StreamBox: @unchecked Sendable {
  private let lock = NSLock()
  private var streams: [any ByteStream] = []
  private var closed = false

  func add(_ stream: any ByteStream) {
    let close = lock.withLock {
      streams.append(stream)
      return closed
    }
    if close { stream.close() }
  }

  func closeAll() {
    let all = lock.withLock {
      closed = true
      return streams
    }
    for stream in all { stream.close() }
  }

  var isClosed: Bool { lock.withLock { closed } }
}

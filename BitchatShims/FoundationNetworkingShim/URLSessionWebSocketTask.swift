import FailClosedSupport
import Foundation
import FoundationNetworking
import HTTPCodec
import TLS

/// Apple's URLSessionWebSocketTask as bitchat's relays use it. Sends, receives and pings
/// issued before the connection opens wait for it (Apple queues them); if it cannot open, each
/// gets the error. A message larger than maximumMessageSize fails the receive (Apple default
/// 1 MiB). `apple`: the shim's own WebSocket over the session's route (SOCKS with the host
/// name, or direct) and TLS; `linux-foundation`: swift-corelibs' task (Debian's libcurl has no
/// WebSocket support: it fails at once).
open class URLSessionWebSocketTask: @unchecked Sendable {
  public enum Message: Sendable {
    case data(Data)
    case string(String)
  }

  public enum CloseCode: Int, Sendable {
    case invalid = 0
    case normalClosure = 1000
    case goingAway = 1001
    case protocolError = 1002
    case unsupportedData = 1003
    case noStatusReceived = 1005
    case abnormalClosure = 1006
    case invalidFramePayloadData = 1007
    case policyViolation = 1008
    case messageTooBig = 1009
    case mandatoryExtensionMissing = 1010
    case internalServerError = 1011
    case tlsHandshakeFailure = 1015
  }

  public enum State: Int, Sendable { case running, suspended, canceling, completed }

  public let originalRequest: URLRequest?
  let url: URL
  private weak var session: URLSession?
  private let configuration: URLSessionConfiguration
  private let via: String
  private let lock = NSLock()
  private var phase: Phase = .idle
  private var waiters: [(Result<WebSocketConnection, Error>) -> Void] = []
  private var inbox: [Result<Message, Error>] = []
  private var receivers: [(Result<Message, Error>) -> Void] = []
  private var pongHandlers: [(Error?) -> Void] = []
  private var stock: FoundationNetworking.URLSessionWebSocketTask?
  open var maximumMessageSize: Int = 1_048_576
  public private(set) var closeCode: CloseCode = .invalid

  private enum Phase {
    case idle, connecting
    case open(WebSocketConnection)
    case ended(Error)
  }

  init(url: URL, session: URLSession) {
    self.url = url
    self.session = session
    configuration = session.configuration
    via = session.route
    originalRequest = URLRequest(url: url)
  }

  public var state: State {
    lock.withLock {
      switch phase {
      case .idle: return .suspended
      case .connecting, .open: return .running
      case .ended: return .completed
      }
    }
  }

  open func resume() {
    if BitchatTransport.current == .linuxFoundation {
      resumeStock()
      return
    }
    let start: Bool = lock.withLock {
      guard case .idle = phase else { return false }
      phase = .connecting
      return true
    }
    guard start else { return }
    BitchatNetworkEvents.record("relay-connect", ["url": url.absoluteString, "via": via])
    let url = self.url
    let configuration = self.configuration
    let limit = maximumMessageSize
    Thread.detachNewThread { [self] in
      let result: Result<WebSocketConnection, Error>
      do {
        guard let target = TransportTarget(url) else { throw URLError(.unsupportedURL) }
        let stream = try AppleStreamOpener.open(
          target, configuration: configuration, timeout: configuration.timeoutIntervalForRequest,
          purpose: "relay")
        do {
          let connection = try WebSocketClient.connect(
            over: stream, host: target.hostHeader, target: target.path,
            limits: WebSocketLimits(maxFramePayload: limit, maxMessageBytes: limit))
          // Apple: no read timeout on an open WebSocket.
          (stream as? TLSConnection)?.setTimeout(nil)
          (stream as? Socket)?.setTimeouts(seconds: 0)
          result = .success(connection)
        } catch {
          stream.close()
          throw URLError(.badServerResponse)
        }
      } catch {
        result = .failure(error)
      }
      opened(result)
    }
  }

  private func opened(_ result: Result<WebSocketConnection, Error>) {
    let pending: [(Result<WebSocketConnection, Error>) -> Void] = lock.withLock {
      if case .ended = phase {
        if case .success(let connection) = result { connection.stream.close() }
        return []
      }
      switch result {
      case .success(let connection): phase = .open(connection)
      case .failure(let error): phase = .ended(error)
      }
      defer { waiters.removeAll() }
      return waiters
    }
    if case .failure(let error) = result { fail(error) }
    for waiter in pending { waiter(result) }
    if case .success(let connection) = result {
      Thread.detachNewThread { [self] in readLoop(connection) }
    }
  }

  private func readLoop(_ connection: WebSocketConnection) {
    while true {
      do {
        let message = try connection.receive()
        switch message {
        case .text(let text): deliver(.success(.string(text)))
        case .binary(let bytes): deliver(.success(.data(Data(bytes))))
        case .pong:
          let handler: ((Error?) -> Void)? = lock.withLock {
            pongHandlers.isEmpty ? nil : pongHandlers.removeFirst()
          }
          handler?(nil)
        case .ping: break
        case .close(let code, _):
          lock.withLock {
            closeCode = code.flatMap { CloseCode(rawValue: Int($0)) } ?? .noStatusReceived
          }
          fail(URLError(.networkConnectionLost))
          return
        }
      } catch {
        fail(URLError(.networkConnectionLost))
        return
      }
    }
  }

  /// Ends the task: pending receives and pings get `error`, later ones too.
  private func fail(_ error: Error) {
    let (receiving, pinging): ([(Result<Message, Error>) -> Void], [(Error?) -> Void]) =
      lock.withLock {
        if case .open(let connection) = phase { connection.stream.close() }
        phase = .ended(error)
        defer {
          receivers.removeAll()
          pongHandlers.removeAll()
        }
        return (receivers, pongHandlers)
      }
    for receiver in receiving { receiver(.failure(error)) }
    for handler in pinging { handler(error) }
  }

  private func deliver(_ message: Result<Message, Error>) {
    let receiver: ((Result<Message, Error>) -> Void)? = lock.withLock {
      if receivers.isEmpty {
        inbox.append(message)
        return nil
      }
      return receivers.removeFirst()
    }
    receiver?(message)
  }

  /// Runs `body` with the open connection once there is one, or with the error.
  private func withConnection(_ body: @escaping (Result<WebSocketConnection, Error>) -> Void) {
    let now: Result<WebSocketConnection, Error>? = lock.withLock {
      switch phase {
      case .open(let connection): return .success(connection)
      case .ended(let error): return .failure(error)
      case .idle, .connecting:
        waiters.append(body)
        return nil
      }
    }
    if let now { body(now) }
  }

  open func send(_ message: Message, completionHandler: @escaping @Sendable (Error?) -> Void) {
    if let stock = lock.withLock({ stock }) {
      stock.send(message.foundation, completionHandler: completionHandler)
      return
    }
    withConnection { result in
      switch result {
      case .failure(let error): completionHandler(error)
      case .success(let connection):
        do {
          switch message {
          case .string(let text):
            try connection.send(text: text)
            BitchatNetworkEvents.record(
              "relay-send", ["url": self.url.absoluteString, "text": text])
          case .data(let data): try connection.send(binary: Array(data))
          }
          completionHandler(nil)
        } catch {
          completionHandler(URLError(.networkConnectionLost))
        }
      }
    }
  }

  open func receive(completionHandler: @escaping @Sendable (Result<Message, Error>) -> Void) {
    if let stock = lock.withLock({ stock }) {
      stock.receive { result in completionHandler(result.map(Message.init(foundation:))) }
      return
    }
    let ready: Result<Message, Error>? = lock.withLock {
      if !inbox.isEmpty { return inbox.removeFirst() }
      if case .ended(let error) = phase { return .failure(error) }
      receivers.append(completionHandler)
      return nil
    }
    if let ready { completionHandler(ready) }
  }

  open func sendPing(pongReceiveHandler: @escaping @Sendable (Error?) -> Void) {
    if let stock = lock.withLock({ stock }) {
      stock.sendPing(pongReceiveHandler: pongReceiveHandler)
      return
    }
    withConnection { [self] result in
      switch result {
      case .failure(let error): pongReceiveHandler(error)
      case .success(let connection):
        lock.withLock { pongHandlers.append(pongReceiveHandler) }
        do { try connection.ping() } catch { fail(URLError(.networkConnectionLost)) }
      }
    }
  }

  open func cancel(with closeCode: CloseCode, reason: Data?) {
    if let stock = lock.withLock({ stock }) {
      stock.cancel(
        with: FoundationNetworking.URLSessionWebSocketTask.CloseCode(rawValue: closeCode.rawValue)
          ?? .goingAway, reason: reason)
      return
    }
    let connection: WebSocketConnection? = lock.withLock {
      if case .open(let connection) = phase { return connection }
      return nil
    }
    connection?.close(code: UInt16(closeCode.rawValue))
    fail(URLError(.cancelled))
    session?.forget(self)
  }

  open func cancel() { cancel(with: .goingAway, reason: nil) }

  // MARK: - linux-foundation

  private func resumeStock() {
    guard let session else { return }
    let task = session.stockSession().webSocketTask(with: url)
    task.maximumMessageSize = maximumMessageSize
    lock.withLock { stock = task }
    BitchatNetworkEvents.record("relay-connect", ["url": url.absoluteString, "via": via])
    task.resume()
  }
}

extension URLSessionWebSocketTask.Message {
  var foundation: FoundationNetworking.URLSessionWebSocketTask.Message {
    switch self {
    case .data(let data): return .data(data)
    case .string(let text): return .string(text)
    }
  }

  init(foundation: FoundationNetworking.URLSessionWebSocketTask.Message) {
    switch foundation {
    case .data(let data): self = .data(data)
    case .string(let text): self = .string(text)
    @unknown default: self = .data(Data())
    }
  }
}

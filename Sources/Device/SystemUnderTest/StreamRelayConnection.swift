import FailClosedSupport
import Foundation
import HTTPCodec
import TLS

/// A relay WebSocket over a ``StreamConnector``: TCP (or SOCKS), TLS for wss, the RFC 6455
/// upgrade, then text frames both ways. Reads run on a dedicated thread; writes on a serial
/// queue; events come back on the app actor.
///
/// As bitchat's NostrRelayManager sees it (connectToRelay): the relay counts as connected when
/// the pong to the ping sent right after resume() comes back, not when the upgrade succeeds;
/// and the task fails if that has not happened within URLSession's default request timeout,
/// 60 s (`timeout`, real seconds here).
@AppActor final class StreamRelayConnection: RelayConnection {
  /// URLSessionConfiguration's default timeoutIntervalForRequest.
  nonisolated static let requestTimeout = 60.0
  private let url: String
  private let connector: any StreamConnector
  private let tls: TLSClient?
  private let timeout: Double
  private let log: AppEventLog
  private let box = StreamBox()
  private let writer = DispatchQueue(label: "failclosed.relay.write")
  private var stream: (any ByteStream)?
  private var events: (@AppActor (RelayConnectionEvent) -> Void)?
  private var finished = false

  init(
    url: String, connector: any StreamConnector, tls: TLSClient?, timeout: Double, log: AppEventLog
  ) {
    self.url = url
    self.connector = connector
    self.tls = tls
    self.timeout = timeout
    self.log = log
  }

  func resume(events: @escaping @AppActor (RelayConnectionEvent) -> Void) {
    self.events = events
    guard let target = HTTPTarget(url) else {
      deliver(.failed(.badServerResponse("unsupported URL")))
      return
    }
    let connector = self.connector
    let tls = self.tls
    let timeout = self.timeout
    let box = self.box
    let url = self.url
    // One ordered channel from the reader thread to the app actor: EVENT before EOSE stays so.
    let (updates, channel) = AsyncStream<Update>.makeStream()
    Task { @AppActor in
      for await update in updates {
        switch update {
        case .opened(let stream):
          self.stream = stream
          self.deliver(.connected)
        case .event(let event): self.deliver(event)
        }
      }
    }
    // URLSession's request timeout: no pong by then and the task fails as timed out.
    let expiry = RelayOpenExpiry()
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
      if expiry.expire() { box.closeAll() }
    }
    BlockingIO.detach("failclosed.relay") {
      // Until the first pong the request timeout (real, the kernel's and asyncAfter's) runs:
      // on the event clock the time runs at the scale meanwhile.
      let hold = RelayOpenHold()
      defer { hold.release() }
      defer { channel.finish() }
      func failure(_ error: Error) -> NetworkFailure {
        if expiry.expired { return .timedOut }
        // The socket's own timeout is the request timeout too: when the read gives up before
        // the timer has fired (a late timer under load), it is the same timeout, not a fault
        // of the relay.
        if let system = error as? SystemError, system.code == EAGAIN || system.code == ETIMEDOUT,
          expiry.expire()
        {
          return .timedOut
        }
        return (error as? NetworkFailure) ?? .connection("\(error)")
      }
      let stream: any ByteStream
      var socket: Socket?
      var leftover: [UInt8] = []
      do {
        stream = try HTTPStream.open(
          target, connector: connector, tls: tls, timeout: timeout, purpose: "relay",
          register: {
            box.add($0)
            if let raw = $0 as? Socket { socket = raw }
          })
        leftover = try Self.upgrade(target, on: stream)
        try stream.write(WebSocketFrame.ping([]).encoded(maskingKey: Self.mask()))
      } catch {
        channel.yield(.event(.failed(failure(error))))
        return
      }
      var ponged = false
      var decoder = WebSocketMessageDecoder(role: .client)
      var pending = leftover
      while !box.isClosed {
        do {
          let messages = try decoder.parse(pending)
          pending = []
          for message in messages {
            switch message {
            case .text(let text): channel.yield(.event(.message(text)))
            case .ping(let payload):
              try stream.write(WebSocketFrame.pong(payload).encoded(maskingKey: Self.mask()))
            case .pong where !ponged:
              guard expiry.settle() else { throw NetworkFailure.timedOut }
              ponged = true
              // Apple: no read timeout on an open WebSocket (the request timeout bounded the
              // opening only), so an idle relay stays connected.
              (stream as? TLSConnection)?.setTimeout(nil)
              socket?.setTimeouts(seconds: 0)
              channel.yield(.opened(stream))
              hold.release()
            case .close:
              channel.yield(.event(.failed(.connection("closed by \(url)"))))
              return
            default: break
            }
          }
          let chunk = try stream.read(max: 65536)
          if chunk.isEmpty {
            let closed = NetworkFailure.connection("closed by \(url)")
            channel.yield(.event(.failed(expiry.expired ? .timedOut : closed)))
            return
          }
          pending = chunk
        } catch {
          channel.yield(.event(.failed(failure(error))))
          return
        }
      }
    }
  }

  /// What the reader thread reports, in order.
  enum Update: Sendable {
    case opened(any ByteStream)
    case event(RelayConnectionEvent)
  }

  nonisolated static func mask() -> [UInt8] { (0..<4).map { _ in UInt8.random(in: 0...255) } }

  /// Sends the upgrade request and checks the 101; returns bytes read past the head.
  nonisolated static func upgrade(_ target: HTTPTarget, on stream: any ByteStream) throws
    -> [UInt8]
  {
    let key = WebSocketHandshake.key(nonce: (0..<16).map { _ in UInt8.random(in: 0...255) })
    let request = WebSocketHandshake.clientRequest(
      host: target.hostHeader, target: target.path, key: key)
    try stream.write(try request.encoded())
    var parser = HTTPResponseParser(requestMethod: "GET")
    for _ in 0..<64 {
      let chunk = try stream.read(max: 16384)
      guard !chunk.isEmpty else { throw NetworkFailure.connection("closed during upgrade") }
      for event in try parser.parse(chunk) {
        if case .head(let head) = event {
          guard head.status == 101 else {
            throw NetworkFailure.badServerResponse("upgrade answered \(head.status)")
          }
          do {
            try WebSocketHandshake.verifyServerResponse(head, key: key)
          } catch {
            throw NetworkFailure.badServerResponse("\(error)")
          }
          return parser.takeUpgradedBytes()
        }
      }
    }
    throw NetworkFailure.badServerResponse("no upgrade response")
  }

  private func deliver(_ event: RelayConnectionEvent) {
    guard !finished else { return }
    if case .failed = event {
      finished = true
      box.closeAll()
    }
    events?(event)
  }

  func send(_ text: String, completion: @escaping @AppActor (Bool) -> Void) {
    guard let stream, !finished else {
      completion(false)
      return
    }
    let bytes = WebSocketFrame.text(text).encoded(maskingKey: Self.mask())
    writer.async {
      let ok = (try? stream.write(bytes)) != nil
      Task { @AppActor in completion(ok) }
    }
  }

  func cancel() {
    finished = true
    box.closeAll()
  }
}

/// The race between a relay's first pong and URLSession's request timeout: whichever comes
/// first wins.
final class RelayOpenExpiry: @unchecked Sendable {
  private let lock = NSLock()
  private var state = 0  // 0 open, 1 connected, 2 timed out

  /// The pong arrived: true unless the timeout came first.
  func settle() -> Bool {
    lock.withLock {
      if state == 0 { state = 1 }
      return state == 1
    }
  }

  /// The timeout fired: true when no pong had come.
  func expire() -> Bool {
    lock.withLock {
      if state == 0 { state = 2 }
      return state == 2
    }
  }

  var expired: Bool { lock.withLock { state == 2 } }
}

/// A relay's hold on the run's event clock while it opens (``RunClockHold``), released once.
final class RelayOpenHold {
  private var hold: RunClockHold.Hold?

  init() { hold = RunClockHold.begin() }

  func release() {
    guard let hold else { return }
    self.hold = nil
    RunClockHold.end(hold)
  }
}

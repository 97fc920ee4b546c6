import FailClosedSupport
import Foundation
import SOCKS

/// One SOCKS request after its handshake, on its own thread: wait for the bootstrap (ctor),
/// apply the destination's fault, connect, reply, relay with the fault's shaping, log. Only
/// what sleeps or blocks comes here (toxics, the bootstrap wait, an upstream hook); a plain
/// stream runs on the listener's event loop (``LoopConnection``).
final class SOCKSStreamRelay: @unchecked Sendable {
  let client: Socket
  let request: SOCKSRequest
  let early: [UInt8]
  let peer: SocketAddress?
  unowned let mock: MockTor
  let started: Double
  private var bytesUp = 0
  private var bytesDown = 0
  private var upstream: Socket?

  init(client: Socket, request: SOCKSRequest, early: [UInt8], peer: SocketAddress?, mock: MockTor) {
    self.client = client
    self.request = request
    self.early = early
    self.peer = peer
    self.mock = mock
    self.started = mock.planTime
  }

  private var configuration: MockTorConfiguration { mock.configuration }
  private var personality: MockTorPersonality { configuration.personality }

  func run() {
    let outcome = serve()
    upstream?.close()
    client.close()
    log(outcome)
  }

  private func serve() -> StreamOutcome {
    let fault = configuration.fault(for: request.address.description)
    if personality == .ctor, let failure = waitForBootstrap() { return failure }
    if personality == .arti, !mock.isReady {
      return fail(.generalFailure, .notBootstrapped)
    }
    if let fault { mock.sleep(fault.delayBeforeAnswer) }
    switch fault?.answer {
    case .reply(let code): return fail(code, .fault)
    case .silence: return blackhole()
    case nil: break
    }
    switch request.command {
    case .resolve: return resolve()
    case .resolvePTR: return resolvePTR()
    default: return connect(fault: fault)
    }
  }

  private func fail(_ code: SOCKSReplyCode, _ result: StreamResult) -> StreamOutcome {
    try? client.write(request.reply(code))
    return StreamOutcome(result: result, reply: code)
  }

  /// ctor: a stream before the bootstrap completes waits, like tor's pending streams, then
  /// gets the reply tor gives a timed-out stream (END_STREAM_REASON_TIMEOUT -> 0x06).
  private func waitForBootstrap() -> StreamOutcome? {
    let deadline = mock.planTime + configuration.streamWaitLimit
    guard !mock.isReady else { return nil }
    mock.streamWaitsForBootstrap(true)
    defer { mock.streamWaitsForBootstrap(false) }
    while !mock.isReady {
      if mock.isStoppedOrCrashed { return StreamOutcome(result: .closedByMock, reply: nil) }
      if mock.planTime >= deadline { return fail(.ttlExpired, .bootstrapWaitTimedOut) }
      if clientHungUp() { return StreamOutcome(result: .clientClosedWhileWaiting, reply: nil) }
      MockTor.pollInterval.sleepBlocking(seconds: 0.02)
    }
    return nil
  }

  private func clientHungUp() -> Bool {
    guard let ready = try? client.poll([.readable, .peerClosedWriting], timeout: 0) else {
      return false
    }
    return !ready.isDisjoint(with: [.peerClosedWriting, .hangUp, .error])
  }

  private func blackhole() -> StreamOutcome {
    swallowClient()
    return StreamOutcome(result: .blackholed, reply: nil)
  }

  /// Reads and drops what the client sends until it closes or the mock stops. A client that
  /// already stopped sending is held open, silent, until its socket fails or the mock stops.
  private func swallowClient(sending: Bool = true) {
    var scratch = [UInt8](repeating: 0, count: 16_384)
    while !mock.isStoppedOrCrashed {
      guard let ready = try? client.poll(sending ? .readable : [], timeout: 0.1) else { break }
      if !sending, !ready.isDisjoint(with: [.hangUp, .error]) { break }
      if sending, !ready.isEmpty {
        let n = (try? client.read(into: &scratch)) ?? 0
        if n <= 0 { break }
        bytesUp += n
      }
    }
  }

  private func resolve() -> StreamOutcome {
    answer(
      StreamAnswers.resolve(
        request, configuration.destinations, upstream: configuration.upstream))
  }

  private func resolvePTR() -> StreamOutcome {
    answer(StreamAnswers.resolvePTR(request, configuration.destinations))
  }

  private func answer(_ answer: ([UInt8], StreamOutcome)) -> StreamOutcome {
    try? client.write(answer.0)
    return answer.1
  }

  private func connect(fault: StreamToxics?) -> StreamOutcome {
    let target: String
    do {
      if personality == .arti, request.address.hostname?.lowercased().hasSuffix(".onion") == true {
        // bitchat's Arti is built without onion-service client support: no upstream reaches
        // an onion service, whatever the network behind it (weakness 3).
        return fail(unknownDestinationReply(), .onionServicesNotSupported)
      }
      if let hook = configuration.upstream {
        target = "upstream"
        upstream = try hook.connect(to: request.address, port: request.port)
      } else {
        guard
          let address = configuration.destinations.target(for: request.address, port: request.port)
        else { return fail(unknownDestinationReply(), .unknownDestination) }
        target = address.description
        upstream = try Socket.connect(to: address, timeout: configuration.connectTimeout)
      }
    } catch let failure as MockTorUpstreamFailure {
      return fail(failure.reply, .upstreamRefused)
    } catch let error as SystemError {
      var outcome = fail(connectFailureReply(error.code), .connectFailed(error.symbol))
      outcome.target = request.address.description
      return outcome
    } catch {
      return fail(.generalFailure, .connectFailed("\(error)"))
    }
    do {
      try client.write(request.reply(.succeeded))
    } catch {
      return StreamOutcome(result: .clientGoneBeforeReply, reply: .succeeded, target: target)
    }
    let result = relay(fault: fault ?? StreamToxics())
    return StreamOutcome(result: result, reply: .succeeded, target: target)
  }

  private func unknownDestinationReply() -> SOCKSReplyCode {
    StreamAnswers.unknownDestinationReply(request, personality)
  }

  private func connectFailureReply(_ code: Int32) -> SOCKSReplyCode {
    StreamAnswers.connectFailureReply(code, personality)
  }

  // MARK: relay

  /// Copies both ways until either side closes, shaped by the destination's toxics in each
  /// direction.
  private func relay(fault: StreamToxics) -> StreamResult {
    guard let upstream else { return .noUpstream }
    if !early.isEmpty {
      guard (try? upstream.write(early)) != nil else { return .destinationClosed }
      bytesUp += early.count
    }
    // 16 KiB a read, and 256 KiB once a read fills that (tools/bench: 16 KiB reads and a
    // copy per chunk kept bulk below dante's; 256 KiB for every stream, a fresh mapping each,
    // cost short streams their rate). Shaped flows still move at most 16 KiB at a time.
    var scratch = [UInt8](repeating: 0, count: 16_384)
    var lastActivity = mock.planTime
    var upOpen = true
    while !mock.isStoppedOrCrashed {
      let ready: [PollEvents]
      do {
        ready = try Socket.poll(
          [(client, upOpen ? .readable : []), (upstream, .readable)], timeout: 0.1)
      } catch {
        return .pollFailed
      }
      if ready.allSatisfy(\.isEmpty) {
        if mock.planTime - lastActivity > configuration.streamIdleTimeout { return .idleTimeout }
        continue
      }
      lastActivity = mock.planTime
      if !ready[0].isEmpty && upOpen {
        let limit = min(scratch.count, fault.readLimit(.upstream) ?? scratch.count)
        let n = (try? client.read(into: &scratch, max: limit)) ?? -1
        if n <= 0 {
          mock.sleep(fault.delayBeforeClosing(.upstream))
          upOpen = false
          upstream.shutdownWrite()
        } else {
          if let reset = resetIfDue(fault, adding: n) { return reset }
          if let silence = silenceIfDue(fault, adding: n, swallowed: n, clientSending: true) {
            return silence
          }
          mock.sleep(fault.delay(before: n, .upstream))
          bytesUp += n
          guard StreamSend.all(upstream.fd, scratch, count: n) else {
            return .destinationClosed
          }
          mock.sleep(fault.delay(after: n, .upstream))
          if n == scratch.count && scratch.count < Self.bulkReadSize { grow(&scratch) }
        }
      }
      if !ready[1].isEmpty {
        let shaped = fault.readLimit(.downstream).map { min(16_384, $0) }
        let limit = min(scratch.count, shaped ?? scratch.count)
        let n = (try? upstream.read(into: &scratch, max: limit)) ?? -1
        if n <= 0 {
          mock.sleep(fault.delayBeforeClosing(.downstream))
          client.shutdownWrite()
          return upOpen ? .destinationClosed : .closed
        }
        if let reset = resetIfDue(fault, adding: n) { return reset }
        if let silence = silenceIfDue(fault, adding: n, swallowed: 0, clientSending: upOpen) {
          return silence
        }
        mock.sleep(fault.delay(before: n, .downstream))
        guard StreamSend.all(client.fd, scratch, count: n) else { return .clientClosed }
        bytesDown += n
        mock.sleep(fault.delay(after: n, .downstream))
        if n == scratch.count && scratch.count < Self.bulkReadSize { grow(&scratch) }
      }
    }
    return .closedByMock
  }

  private static let bulkReadSize = 262_144

  private func grow(_ scratch: inout [UInt8]) {
    scratch = [UInt8](repeating: 0, count: Self.bulkReadSize)
  }

  private func resetIfDue(_ fault: StreamToxics, adding count: Int) -> StreamResult? {
    guard fault.resets(after: bytesUp + bytesDown + count) else { return nil }
    client.reset()
    return .resetAfter(bytes: bytesUp + bytesDown)
  }

  /// blackhole=BYTES: the chunk that would pass the limit is dropped (`swallowed` counts the
  /// client's part of it, as a blackhole counts what it swallows), then the stream stays open
  /// and silent.
  private func silenceIfDue(
    _ fault: StreamToxics, adding count: Int, swallowed: Int, clientSending: Bool
  ) -> StreamResult? {
    let relayed = bytesUp + bytesDown
    guard fault.silences(after: relayed + count) else { return nil }
    bytesUp += swallowed
    swallowClient(sending: clientSending)
    return .blackholedAfter(bytes: relayed)
  }

  // MARK: log

  private func log(_ outcome: StreamOutcome) {
    outcome.record(
      in: mock.eventLog, request: request, peer: peer, started: started, now: mock.planTime,
      bytesUp: bytesUp, bytesDown: bytesDown)
  }
}

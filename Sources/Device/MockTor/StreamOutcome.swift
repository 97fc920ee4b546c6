import FailClosedSupport
import SOCKS

/// How a SOCKS request ended, as its "socks" event records it: the result in words, the reply
/// code sent (none when the client got no reply), where it went and what a resolve answered.
struct StreamOutcome: Sendable {
  var result: StreamResult
  var reply: SOCKSReplyCode?
  var target: String?
  var answer: String?
  /// The target as an address, written out only when the record is (see ``target``).
  var targetAddress: SocketAddress?

  init(
    result: StreamResult, reply: SOCKSReplyCode?, target: String? = nil, answer: String? = nil,
    targetAddress: SocketAddress? = nil
  ) {
    self.result = result
    self.reply = reply
    self.target = target
    self.answer = answer
    self.targetAddress = targetAddress
  }

  /// Records the stream's "socks" event: the request, this outcome and the bytes relayed.
  func record(
    in log: MockTorEventLog, request: SOCKSRequest, peer: SocketAddress?, started: Double,
    now: Double, bytesUp: Int, bytesDown: Int
  ) {
    log.record("socks", time: now) { [self] in
      var fields: [String: EventLogValue] = [
        "version": .string(request.version.rawValue),
        "command": .string(request.command.description),
        "destination": .string(request.address.description),
        "port": .int(Int(request.port)),
        "raw_ip": .bool(request.address.isIPLiteral),
        "address_type": .string(request.address.wireType),
        "outcome": .string(result.description),
        "bytes_up": .int(bytesUp),
        "bytes_down": .int(bytesDown),
        "duration": .double(((now - started) * 1000).rounded() / 1000),
      ]
      fields["isolation"] = MockTor.describe(request.authentication)
      if let reply { fields["reply"] = .int(Int(reply.rawValue)) }
      if let target = target ?? targetAddress?.description { fields["target"] = .string(target) }
      if let answer { fields["answer"] = .string(answer) }
      if let peer { fields["client"] = .string(peer.description) }
      return fields
    }
  }
}

/// How a stream ended, one case per way the mock ends one; the "socks" event's `outcome` is
/// its description, in the words the event log has always used.
enum StreamResult: Sendable, Equatable, CustomStringConvertible {
  case resolved, resolveFailed
  /// Refused before any connect: the plan's state or the destination.
  case notBootstrapped, bootstrapWaitTimedOut, fault, onionServicesNotSupported
  case unknownDestination, upstreamRefused
  /// The connect to the destination failed, with the error when known (ECONNREFUSED).
  case connectFailed(String?)
  case blackholed, closedByMock, clientClosedWhileWaiting, clientGoneBeforeReply
  /// A relayed stream's end: both sides closed, or the one named.
  case closed, destinationClosed, clientClosed, idleTimeout, noUpstream, pollFailed
  /// A `reset` fault, after this many bytes relayed.
  case resetAfter(bytes: Int)
  /// A `blackhole=BYTES` fault: silent after this many bytes relayed.
  case blackholedAfter(bytes: Int)

  var description: String {
    switch self {
    case .resolved: return "resolved"
    case .resolveFailed: return "resolve failed"
    case .notBootstrapped: return "not bootstrapped"
    case .bootstrapWaitTimedOut: return "bootstrap wait timed out"
    case .fault: return "fault"
    case .onionServicesNotSupported: return "onion services not supported"
    case .unknownDestination: return "unknown destination"
    case .upstreamRefused: return "upstream refused"
    case .connectFailed(let detail): return "connect failed" + (detail.map { ": " + $0 } ?? "")
    case .blackholed: return "blackholed"
    case .closedByMock: return "closed by mock"
    case .clientClosedWhileWaiting: return "client closed while waiting"
    case .clientGoneBeforeReply: return "client gone before reply"
    case .closed: return "closed"
    case .destinationClosed: return "destination closed"
    case .clientClosed: return "client closed"
    case .idleTimeout: return "idle timeout"
    case .noUpstream: return "no upstream"
    case .pollFailed: return "poll failed"
    case .resetAfter(let bytes): return "reset after \(bytes) bytes"
    case .blackholedAfter(let bytes): return "blackholed after \(bytes) bytes"
    }
  }
}

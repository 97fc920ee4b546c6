import FailClosedSupport
import SOCKS

/// How a SOCKS request ended, as its "socks" event records it: the result in words, the reply
/// code sent (none when the client got no reply), where it went and what a resolve answered.
struct StreamOutcome: Sendable {
  var result: String
  var reply: SOCKSReplyCode?
  var target: String?
  var answer: String?
  /// The target as an address, written out only when the record is (see ``target``).
  var targetAddress: SocketAddress?

  init(
    result: String, reply: SOCKSReplyCode?, target: String? = nil, answer: String? = nil,
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
        "outcome": .string(result),
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

import FailClosedSupport
import SOCKS

/// Where a request goes once its handshake is done, decided without I/O: answered at once (a
/// resolve, a refusal), connected and relayed on the listener's event loop (the plain path),
/// or handed to a thread of its own (toxics, a wait for the bootstrap, an upstream hook: they
/// sleep or block).
enum StreamRoute {
  /// Send `reply`, close, log `outcome`.
  case answer(reply: [UInt8], outcome: StreamOutcome)
  /// Connect to the address and relay without shaping.
  case relay(SocketAddress)
  /// ``SOCKSStreamRelay`` on a thread of its own.
  case thread

  /// The route of `request` when the mock is `ready` (bootstrapped and running).
  static func of(_ request: SOCKSRequest, ready: Bool, _ configuration: MockTorConfiguration)
    -> StreamRoute
  {
    let toxics =
      configuration.faults.isEmpty ? nil : configuration.fault(for: request.address.description)
    guard ready, toxics == nil else { return .thread }
    let personality = configuration.personality
    switch request.command {
    case .resolve:
      let (reply, outcome) = StreamAnswers.resolve(
        request, configuration.destinations, upstream: configuration.upstream)
      return .answer(reply: reply, outcome: outcome)
    case .resolvePTR:
      let (reply, outcome) = StreamAnswers.resolvePTR(request, configuration.destinations)
      return .answer(reply: reply, outcome: outcome)
    default:
      if personality == .arti, request.address.hostname?.lowercased().hasSuffix(".onion") == true {
        // bitchat's Arti is built without onion-service client support: no upstream reaches
        // an onion service, whatever the network behind it (weakness 3).
        return refusal(
          request, StreamAnswers.unknownDestinationReply(request, personality),
          .onionServicesNotSupported)
      }
      if configuration.upstream != nil { return .thread }
      guard
        let address = configuration.destinations.target(for: request.address, port: request.port)
      else {
        return refusal(
          request, StreamAnswers.unknownDestinationReply(request, personality),
          .unknownDestination)
      }
      return .relay(address)
    }
  }

  private static func refusal(
    _ request: SOCKSRequest, _ code: SOCKSReplyCode, _ result: StreamResult
  )
    -> StreamRoute
  {
    .answer(reply: request.reply(code), outcome: StreamOutcome(result: result, reply: code))
  }
}

import FailClosedSupport
import Foundation
import SOCKS

/// The mock's answers that need no destination, and the reply codes it gives a failed stream,
/// per personality: the same on the event loop and on a stream's own thread.
enum StreamAnswers {
  /// RESOLVE: an IP literal as is, a mapped name its virtual address, localhost 127.0.0.1.
  /// RESOLVE: the mock's map first, then the exit's resolver (`upstream`), else a failure.
  static func resolve(
    _ request: SOCKSRequest, _ map: DestinationMap, upstream: (any MockTorUpstream)? = nil
  ) -> ([UInt8], StreamOutcome) {
    switch request.address {
    case .ipv4, .ipv6:
      return (
        request.resolvedReply(request.address),
        StreamOutcome(result: .resolved, reply: .succeeded, answer: request.address.description)
      )
    case .hostname(let name):
      let answer: SOCKSAddress
      if let virtual = map.virtualAddress(for: name) {
        answer = .ipv4(virtual)
      } else if name.lowercased() == "localhost" {
        answer = .ipv4([127, 0, 0, 1])
      } else if let exit = upstream?.resolve(name) {
        answer = exit
      } else {
        return failure(request, .hostUnreachable, .resolveFailed)
      }
      return (
        request.resolvedReply(answer),
        StreamOutcome(result: .resolved, reply: .succeeded, answer: answer.description)
      )
    }
  }

  /// RESOLVE_PTR: the mapped name behind a virtual address.
  static func resolvePTR(_ request: SOCKSRequest, _ map: DestinationMap) -> (
    [UInt8], StreamOutcome
  ) {
    guard case .ipv4(let bytes) = request.address, let name = map.host(forVirtual: bytes) else {
      return failure(request, .hostUnreachable, .resolveFailed)
    }
    return (
      request.resolvedReply(.hostname(name)),
      StreamOutcome(result: .resolved, reply: .succeeded, answer: name)
    )
  }

  static func failure(_ request: SOCKSRequest, _ code: SOCKSReplyCode, _ result: StreamResult) -> (
    [UInt8], StreamOutcome
  ) {
    (request.reply(code), StreamOutcome(result: result, reply: code))
  }

  /// tor: an unknown name fails to resolve at the exit (RESOLVEFAILED -> 0x04); an onion
  /// address tor cannot parse gets 0x01 without ExtendedErrors. Arti: onion errors F0/F6,
  /// everything else 0x05 (the seeds' "failed connect").
  static func unknownDestinationReply(_ request: SOCKSRequest, _ personality: MockTorPersonality)
    -> SOCKSReplyCode
  {
    let onion = request.address.hostname.map { $0.lowercased().hasSuffix(".onion") } ?? false
    let validOnion = request.address.hostname.map(isValidOnionV3) ?? false
    switch (personality, onion) {
    case (.arti, true): return validOnion ? .onionDescriptorNotFound : .onionInvalidAddress
    case (.arti, false): return .connectionRefused
    case (.ctor, true): return validOnion ? .onionDescriptorNotFound : .generalFailure
    case (.ctor, false): return request.address.isRawIP ? .networkUnreachable : .hostUnreachable
    }
  }

  /// A failed connect's reply: tor maps the errno as its end reasons do; Arti says 0x05.
  static func connectFailureReply(_ code: Int32, _ personality: MockTorPersonality)
    -> SOCKSReplyCode
  {
    if personality == .arti { return .connectionRefused }
    switch code {
    case ECONNREFUSED, ECONNRESET: return .connectionRefused
    case ETIMEDOUT: return .ttlExpired
    case ENETUNREACH: return .networkUnreachable
    case EHOSTUNREACH: return .hostUnreachable
    default: return .generalFailure
    }
  }

  static func isValidOnionV3(_ name: String) -> Bool {
    let labels = name.lowercased().split(separator: ".")
    guard labels.count >= 2, labels.last == "onion" else { return false }
    let key = labels[labels.count - 2]
    return key.count == 56
      && key.allSatisfy { ("a"..."z").contains($0) || ("2"..."7").contains($0) }
  }
}

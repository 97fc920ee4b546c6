/// What an allowed endpoint is. The role, not the address, decides which transport a packet
/// to it may use and what the device's bytes on it must look like: a Tor relay's ORPort, a
/// DirPort and a bridge speak TCP only, so UDP or ICMP to one is a leak like any other, and
/// a TCP flow to one that does not start as its protocol starts is a leak of class
/// `clear-on-tor-endpoint` (``TorEndpointContent``). `tcp` and `udp` are a user's explicit
/// exemptions, for endpoints the audit knows nothing about: their content is not checked.
public enum EndpointRole: String, Sendable, Codable, CaseIterable {
  /// A relay's ORPort or a vanilla bridge: Tor's link protocol is TLS from the first byte,
  /// so the device's bytes are TLS records, the first a handshake record with a ClientHello.
  case orPort = "orport"
  /// A directory's DirPort: the device's first bytes are an HTTP request for a directory
  /// document (`GET /tor/...`, or `POST /tor/...` as relays publish).
  case dirPort = "dirport"
  /// An obfs4 bridge: its bytes look random, so the device's first bytes must be no
  /// recognisable clear protocol (no HTTP request line, no TLS record, no DNS message, no
  /// SOCKS greeting, no line of text).
  case obfs4 = "obfs4"
  /// A guard of the harness's own fake Tor network (the mock lane and `exec`): the device's
  /// first bytes are the mock Tor's tunnel request (Sandbox's `GuardTunnel`: "FCT1", a host,
  /// a port). What follows is the stream the mock carries: the fake network does not encrypt.
  case mockGuard = "mock-guard"
  /// Any TCP, content unchecked: an endpoint a user names for something the audit does not
  /// know.
  case tcp
  /// Any UDP, content unchecked: only when a user names it.
  case udp

  /// The one transport (IP protocol number) the role carries.
  public var transport: UInt8 {
    self == .udp ? IPProtocolNumber.udp : IPProtocolNumber.tcp
  }

  /// Whether the device's bytes on a flow to this role are checked.
  public var checksContent: Bool {
    self != .tcp && self != .udp
  }

  /// The endpoint as a reader names it ("a relay's ORPort").
  public var noun: String {
    switch self {
    case .orPort: return "a relay's ORPort"
    case .dirPort: return "a DirPort"
    case .obfs4: return "an obfs4 bridge"
    case .mockGuard: return "a guard of the mock network"
    case .tcp: return "a TCP endpoint"
    case .udp: return "a UDP endpoint"
    }
  }

  /// What the role allows, in one sentence (docs, `--help`).
  public var allows: String {
    switch self {
    case .orPort: return "TCP only; the device's bytes are TLS records, the first a ClientHello"
    case .dirPort: return "TCP only; the device's first bytes are an HTTP request for /tor/"
    case .obfs4:
      return
        "TCP only; the device's first bytes are no clear protocol (HTTP, TLS, DNS, SOCKS, text)"
    case .mockGuard:
      return "TCP only; the device's first bytes are the mock Tor's tunnel request (FCT1)"
    case .tcp: return "TCP, content not checked"
    case .udp: return "UDP, content not checked"
    }
  }
}

/// Why a packet that left the device is a leak: the evidence a reviewer reads next to the
/// class. Several leaks of one class and destination with different reasons are kept apart.
public enum LeakReason: String, Sendable, Codable, CaseIterable {
  /// Its destination is not an allowed endpoint.
  case destinationNotAllowed = "destination-not-allowed"
  /// It left the device carrying an allowed endpoint's address as its source: a reply can
  /// only arrive, so this is a forged packet, judged by where it goes.
  case forgedSource = "forged-source"
  /// An ICMP error not sent towards the endpoint of the allowed flow it quotes.
  case icmpErrorMisdirected = "icmp-error-misdirected"
  /// An ICMP error whose quote does not fit the flow it names (its addresses, or more bytes
  /// than the quoted packet had).
  case icmpQuoteInconsistent = "icmp-quote-inconsistent"
  /// An ICMP error longer than an error may be (576 bytes in IPv4, 1280 in IPv6).
  case icmpErrorOversized = "icmp-error-oversized"
  /// IPv4 options (source routing, record route, timestamps, anything but router alert).
  case ipOptions = "ip-options"
  /// An IPv6 routing header: the destination is only a waypoint.
  case routingHeader = "ipv6-routing-header"
  /// Fragments whose pieces disagree (overlap the transport header or each other).
  case fragmentOverlap = "fragment-overlap"
  /// ARP, neighbour discovery, MLD or IGMP that is not well formed, or carries bytes beyond
  /// the protocol.
  case malformedLinkControl = "malformed-link-control"
  /// Link control about addresses or groups beyond the link.
  case linkControlOffLink = "link-control-off-link"
  /// More positive-control packets than the harness sends.
  case probeImitation = "probe-imitation"
  /// A transport the allowed endpoint does not speak (UDP or ICMP to a relay, which speaks
  /// TCP only).
  case protocolNotAllowed = "protocol-not-allowed"
  /// Bytes on a flow to a Tor endpoint that are not what the endpoint speaks (class
  /// `clear-on-tor-endpoint`).
  case contentNotAllowed = "content-not-allowed"
  /// IPv6 hop-by-hop or destination options carrying data, or options the packet has no use
  /// for.
  case extensionOptions = "ipv6-extension-options"
  /// Bytes after the message (past the IP or UDP datagram's own length).
  case trailingData = "trailing-data"
  /// An exempt packet carrying an IPv4 option or IPv6 extension header its protocol does not
  /// need (MLD needs a hop-by-hop router alert, IGMP an IPv4 router alert, nothing else any).
  case headerNotNeeded = "header-not-needed"
  /// TCP options no stack sends, or at lengths they never have, or data after their end.
  case tcpOptions = "tcp-options"
  /// A frame that is not IP, or whose headers do not decode.
  case notIP = "not-ip"
  case undecodable
}

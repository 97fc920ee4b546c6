/// The audit's allowlist: each allowed {address, port} with its role (``EndpointRole``),
/// which says the transport a packet to it may use and what its content must look like.
/// Written `ROLE:HOST:PORT` (`orport:10.66.1.10:9001`, `obfs4:[fd00::5]:4433`); a bare
/// `HOST:PORT` is an ORPort, the strictest reading, since the audit exists for Tor.
public struct AllowedEndpoints: Sendable, Equatable, ExpressibleByArrayLiteral {
  public private(set) var roles: [Endpoint: EndpointRole] = [:]

  public init() {}

  public init(arrayLiteral elements: (Endpoint, EndpointRole)...) {
    self.init(elements)
  }

  public init(_ elements: some Sequence<(Endpoint, EndpointRole)>) {
    for (endpoint, role) in elements { roles[endpoint] = role }
  }

  /// Every endpoint in one role.
  public init(_ endpoints: some Sequence<Endpoint>, as role: EndpointRole) {
    for endpoint in endpoints { roles[endpoint] = role }
  }

  @inline(__always)
  public func role(of endpoint: Endpoint) -> EndpointRole? { roles[endpoint] }

  @inline(__always)
  public func contains(_ endpoint: Endpoint) -> Bool { roles[endpoint] != nil }

  /// Whether `endpoint` is allowed for packets of IP protocol `proto`.
  @inline(__always)
  public func allows(_ endpoint: Endpoint, transport proto: UInt8) -> Bool {
    roles[endpoint]?.transport == proto
  }

  public func containsAddress(_ address: IPAddress) -> Bool {
    roles.keys.contains { $0.address == address }
  }

  /// Adds or retypes an endpoint: the later word on one endpoint is the one that counts.
  public mutating func insert(_ endpoint: Endpoint, as role: EndpointRole) {
    roles[endpoint] = role
  }

  /// This list with `other`'s entries added (other's role wins where both name an endpoint).
  public func union(_ other: AllowedEndpoints) -> AllowedEndpoints {
    var result = self
    for (endpoint, role) in other.roles { result.roles[endpoint] = role }
    return result
  }

  /// `ROLE:HOST:PORT`, sorted by endpoint: what reports show, as `--allow` reads it.
  public var descriptions: [String] {
    roles.sorted { $0.key < $1.key }.map { "\($0.value.rawValue):\($0.key)" }
  }

  /// Parses `ROLE:HOST:PORT` or `HOST:PORT` (an ORPort); nil when it is neither.
  public static func parse(_ text: String) -> (Endpoint, EndpointRole)? {
    if let colon = text.firstIndex(of: ":"),
      let role = EndpointRole(rawValue: String(text[..<colon]))
    {
      return Endpoint(String(text[text.index(after: colon)...])).map { ($0, role) }
    }
    return Endpoint(text).map { ($0, .orPort) }
  }
}

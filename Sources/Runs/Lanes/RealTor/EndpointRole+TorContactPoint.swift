import Audit
import Testnet

extension EndpointRole {
  /// The audit's role for what listens on a private network's endpoint.
  public init(_ kind: TorContactPoint.Kind) {
    switch kind {
    case .orPort, .vanillaBridge: self = .orPort
    case .dirPort: self = .dirPort
    case .obfs4Bridge: self = .obfs4
    }
  }
}

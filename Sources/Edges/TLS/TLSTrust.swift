/// Which certificates a ``TLSClient`` accepts as trust anchors.
public enum TLSTrust: Sendable {
  /// Debian's system store (/etc/ssl/certs): for real hosts.
  case system
  /// Only the certificates in this PEM text, e.g. a ``TestCertificateAuthority``'s root.
  case pem(String)
}

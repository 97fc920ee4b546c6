import COpenSSL

/// The OpenSSL the process runs with ("OpenSSL 3.0.15 3 Sep 2024"), as the library says.
public enum OpenSSLVersion {
  public static var text: String { String(cString: OpenSSL_version(Int32(OPENSSL_VERSION))) }
}

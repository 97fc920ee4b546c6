import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The mock lane's Arti: the harness's mock Tor with the arti personality runs beside the app
/// (the scenario runner starts it in the device) and binds its SOCKS port only once its
/// bootstrap plan completes, as Arti does. Bootstrapped = that port accepts a connection
/// (checked every 100 ms); its listener is then the SOCKS listener. The mock keeps listening
/// after arti_stop (Arti would close it): a limit of this mode, reported in the docs.
struct ExternalArtiBootstrap: ArtiBootstrap {
  let address: String

  func bootstrap(stateDirectory: String, cacheDirectory: String) throws -> any ArtiClient {
    try FileManager.default.createDirectory(
      atPath: stateDirectory, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: cacheDirectory, withIntermediateDirectories: true)
    while !Self.accepts(address) { usleep(100_000) }
    return ExternalClient()
  }

  struct ExternalClient: ArtiClient {
    func serveSOCKS(port: UInt16) throws -> any ArtiListener { ExternalListener() }
  }

  struct ExternalListener: ArtiListener {
    func stop() {}
  }

  /// One TCP connect to host:port (IPv4), closed at once. A connect whose ephemeral source
  /// port happens to be the target port connects the socket to itself (TCP simultaneous open)
  /// with nothing listening: seen once in about 400 polls of an unbound 39050, it made a
  /// stalled mock look bootstrapped. Such a self-connection does not count.
  static func accepts(_ address: String) -> Bool {
    guard let colon = address.lastIndex(of: ":"),
      let port = UInt16(address[address.index(after: colon)...])
    else { return false }
    let host = String(address[..<colon])
    var socketAddress = sockaddr_in()
    socketAddress.sin_family = sa_family_t(AF_INET)
    socketAddress.sin_port = port.bigEndian
    guard inet_pton(AF_INET, host, &socketAddress.sin_addr) == 1 else { return false }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    // Closed with a reset (SO_LINGER 0): a probe that connected to itself would otherwise sit
    // in TIME_WAIT on the port for 60 s, and the mock could not bind it once bootstrapped.
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    defer { close(fd) }
    let result = withUnsafePointer(to: &socketAddress) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard result == 0 else { return false }
    var local = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &local) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    // Connected to itself: its own address and port are the target's.
    return
      !(UInt16(bigEndian: local.sin_port) == port
      && local.sin_addr.s_addr == socketAddress.sin_addr.s_addr)
  }
}

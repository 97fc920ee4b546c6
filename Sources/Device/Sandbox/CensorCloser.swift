import FailClosedSupport

/// The censor's own end for `close-after-connect`: connections redirected to it (nftables DNAT
/// in the censor namespace) are accepted and closed at once, with a FIN. It then reads and
/// discards what the client still sends, so the client sees a clean EOF (OONI's eof_error), not
/// the reset a closed socket would answer late data with.
extension SandboxRun {
  /// Where the closer listens, in the censor namespace (device side).
  static let closerPort: UInt16 = 7070

  func startCloserIfNeeded(_ rules: [CensorRule]) throws {
    guard rules.contains(where: { $0.action == .closeAfterConnect }),
      closer.withLock({ $0 == nil })
    else { return }
    let loop = ServiceLoop(name: "censor.closer", namespace: censor)
    do {
      for host in [CensorRuleset.poisonResolverV4, CensorRuleset.poisonResolverV6] {
        let address = SocketAddress(host: host, port: SandboxRun.closerPort)!
        let listener = try censor.perform { try Socket.listen(on: address, freeBind: true) }
        try loop.serve(listener) { connection, _ in
          connection.shutdownWrite()
          connection.setTimeouts(seconds: 10)
          for _ in 0..<1024 {
            guard let bytes = try? connection.read(max: 65536), !bytes.isEmpty else { break }
          }
          return nil
        }
      }
    } catch {
      loop.stop()
      throw error
    }
    closer.withLock { $0 = loop }
    recordService("censor.closer") { loop.stop() }
  }
}

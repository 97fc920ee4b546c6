import FailClosedSupport

extension SandboxRun {
  /// A resolver on the world's own loopback (127.0.0.1:53), answering as the world's resolver
  /// does (every name: the web host). A tor exit in the world has no resolv.conf of its own
  /// (the private network's torrcs point it at /dev/null) and falls back to 127.0.0.1, so this
  /// lets names given to `exec --tor real`'s tor resolve at the exit. Stopped at teardown.
  @discardableResult
  public func startWorldLoopbackResolver() throws -> FakeResolver {
    let resolver = try FakeResolver(
      name: "world.loopback-dns", namespace: world,
      addresses: [SocketAddress(host: "127.0.0.1", port: 53)!], answer: WorldServices.worldAnswer)
    recordService("world-loopback-dns") { resolver.stop() }
    return resolver
  }
}

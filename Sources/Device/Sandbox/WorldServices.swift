import FailClosedSupport
import Foundation
import TLS

/// The world's services, on threads inside the world namespace whose sockets were created there
/// (setns on dedicated threads; see ``NetworkNamespace``):
/// - the resolver on 10.66.1.53 and fd66:0:0:2::53, UDP and TCP 53: every A/AAAA question gets
///   the web host's address, every question is recorded;
/// - HTTP on port 80 and HTTPS on port 443 of every world address, answering any Host, with a
///   certificate per SNI name from a test CA made for the run (``authority``); both also accept
///   WebSocket upgrades and echo messages;
/// - the guards of the fake Tor network (``AddressPlan/guards``), speaking ``GuardTunnel``;
/// - a catch-all TCP echo (port 7) to which every other TCP port is redirected, so a direct
///   connect to any address and port from the device succeeds, as it would on the Internet.
public final class WorldServices: @unchecked Sendable {
  public static let resolverV6 = "fd66:0:0:2::53"
  public static let echoPort: UInt16 = 7
  /// Ports the world serves itself; every other TCP port goes to the echo.
  public static let servedPorts: [UInt16] = [53, 80, 443] + AddressPlan.guards.map(\.port)

  public let resolver: FakeResolver
  /// The run's test CA: clients that should trust the world's HTTPS trust its root.
  public let authority: TestCertificateAuthority
  let loop: ServiceLoop

  /// The world's answer to a question: the web host, v4 or v6.
  static func worldAnswer(_ question: DNSQuestion) -> [UInt8]? {
    switch question.type {
    case DNSQuestion.typeA: return SocketAddress.parseIP(AddressPlan.webHostV4)
    case DNSQuestion.typeAAAA: return SocketAddress.parseIP(AddressPlan.webHostV6)
    default: return nil
    }
  }

  /// Addresses the world holds besides its link address (on its loopback).
  static var serviceAddresses: [String] {
    [
      AddressPlan.resolverV4 + "/32", resolverV6 + "/128", AddressPlan.webHostV4 + "/32",
      AddressPlan.webHostV6 + "/128",
    ] + AddressPlan.guards.map { $0.host + ($0.family == .ipv4 ? "/32" : "/128") }
  }

  init(run: SandboxRun, fault: WorldFault = .none) throws {
    let world = run.world
    let addresses = WorldServices.serviceAddresses
    try CommandRunner.run(
      ["ip", "-n", run.names.world, "-batch", "-"],
      stdin: addresses.map { "addr add \($0) dev lo" }.joined(separator: "\n") + "\n")
    let ports = WorldServices.servedPorts.map(String.init).joined(separator: ", ")
    let redirect = """
      table inet world {
        chain prerouting {
          type nat hook prerouting priority dstnat; policy accept;
          iifname "eth*" ip daddr \(AddressPlan.ownProgramsBlockV4) accept
          iifname "eth*" tcp dport != { \(ports) } redirect to :\(WorldServices.echoPort)
        }
      }

      """
    _ = try world.perform { try CommandRunner.run(["nft", "-f", "-"], stdin: redirect) }
    resolver = try FakeResolver(
      name: "world.dns", namespace: world,
      addresses: [
        SocketAddress(host: AddressPlan.resolverV4, port: 53)!,
        SocketAddress(host: WorldServices.resolverV6, port: 53)!,
      ],
      answer: WorldServices.worldAnswer)
    loop = ServiceLoop(name: "world", namespace: world)
    do {
      authority = try TestCertificateAuthority(
        commonName: "failclosed world CA \(run.names.prefix)")
      let tls = try TLSServer(authority: authority, defaultName: "world.invalid")
      let https = SocketAddress(host: "::", port: 443)!
      try loop.serve(try world.perform { try Socket.listen(on: https, freeBind: true) }) {
        connection, _ in
        if fault.apply(to: connection) { return nil }
        guard let secure = try? tls.accept(connection, timeout: 10) else { return nil }
        HTTPResponder.serve(secure)
        return { secure.close() }
      }
      let http = SocketAddress(host: "::", port: 80)!
      let echo = SocketAddress(host: "::", port: WorldServices.echoPort)!
      try loop.serve(try world.perform { try Socket.listen(on: http, freeBind: true) }) {
        connection, _ in
        if fault.apply(to: connection) { return nil }
        HTTPResponder.serve(connection)
        return nil
      }
      try loop.serve(try world.perform { try Socket.listen(on: echo, freeBind: true) }) {
        connection, _ in
        if fault.apply(to: connection) { return nil }
        for _ in 0..<10_000 {
          guard let bytes = try? connection.read(), !bytes.isEmpty else { return nil }
          if (try? connection.write(bytes)) == nil { return nil }
        }
        return nil
      }
      for guardAddress in AddressPlan.guards {
        try loop.serve(try world.perform { try Socket.listen(on: guardAddress, freeBind: true) }) {
          connection, _ in
          GuardServer.serve(connection)
          return nil
        }
      }
    } catch {
      resolver.stop()
      loop.stop()
      throw error
    }
  }

  public func stop() {
    loop.stop()
    resolver.stop()
  }
}

extension SandboxRun {
  /// Starts the world's services (once) and returns them.
  @discardableResult
  public func startWorld(fault: WorldFault = .none) throws -> WorldServices {
    // A slot's world is its run's: one set of services answers every slot.
    if let parent { return try parent.startWorld(fault: fault) }
    if let running = worldServices.withLock({ $0 }) { return running }
    let services = try WorldServices(run: self, fault: fault)
    worldServices.withLock { $0 = services }
    recordService("world") { services.stop() }
    return services
  }
}

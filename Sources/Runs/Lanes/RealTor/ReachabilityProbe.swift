import FailClosedSupport
import Foundation
import Sandbox
import Scenarios

/// Probes the private network's nodes from the device, as OONI's `tor` test probes its
/// targets, so a replayed measurement shows the sandbox's reachability next to the measured
/// one: a TCP connect (3 s), then the class's first exchange: a TLS ClientHello to an ORPort
/// (a ServerHello back is success), an HTTP GET to a DirPort (a status line back), 300 bytes to
/// the obfs4 port (a bridge waits silently for a valid handshake: silence, or data, is success;
/// a reset or a close is not). Failures are named as OONI names them. All nodes at once, one
/// thread each, in the device namespace; at most about 6 s in all.
public enum ReachabilityProbe {
  public static let connectTimeout = 3.0
  public static let exchangeTimeout = 3.0

  public static func probe(
    _ nodes: [(node: String, targetClass: RealTorTargetClass, address: SocketAddress)],
    in device: NetworkNamespace
  ) -> [ReachabilityResult] {
    let results = Locked<[String: ReachabilityResult]>([:])
    let done = DispatchSemaphore(value: 0)
    var started = 0
    for item in nodes {
      do {
        try device.detach("probe.\(item.node)") {
          let elapsed = SystemClock()
          let failure = probeOne(item.address, item.targetClass)
          results.withLock {
            $0[item.node] = ReachabilityResult(
              node: item.node, targetClass: item.targetClass, failure: failure,
              seconds: elapsed.now)
          }
          done.signal()
        }
        started += 1
      } catch {
        results.withLock {
          $0[item.node] = ReachabilityResult(
            node: item.node, targetClass: item.targetClass,
            failure: "unknown_failure: \(error)", seconds: 0)
        }
      }
    }
    for _ in 0..<started {
      _ = done.wait(timeout: .now() + connectTimeout + exchangeTimeout + 5)
    }
    let collected = results.withLock { $0 }
    return nodes.map {
      collected[$0.node]
        ?? ReachabilityResult(
          node: $0.node, targetClass: $0.targetClass, failure: "unknown_failure: no answer",
          seconds: 0)
    }
  }

  static func probeOne(_ address: SocketAddress, _ cls: RealTorTargetClass) -> String? {
    let socket: Socket
    do {
      socket = try Socket.connect(to: address, timeout: connectTimeout)
    } catch let error as SystemError {
      return failureName(errno: error.code)
    } catch {
      return "unknown_failure: \(error)"
    }
    defer { socket.close() }
    socket.setTimeouts(seconds: exchangeTimeout)
    let request: [UInt8]
    switch cls {
    case .dirauthORPorts, .relayORPorts: request = clientHello()
    case .dirauthDirPorts:
      request = Array(
        ("GET /tor/status-vote/current/consensus HTTP/1.0\r\nHost: \(address.host)\r\n"
          + "User-Agent: failclosed-reachability-probe\r\n\r\n").utf8)
    case .bridgeObfs4: request = (0..<300).map { _ in UInt8.random(in: 0...255) }
    }
    do {
      try socket.write(request)
      let answer = try socket.read(max: 16)
      return classifyAnswer(answer, cls)
    } catch let error as SystemError {
      if cls == .bridgeObfs4, error.code == EAGAIN || error.code == EWOULDBLOCK {
        return nil
      }
      return failureName(errno: error.code)
    } catch {
      return "unknown_failure: \(error)"
    }
  }

  /// The first bytes of the answer: EOF is eof_error; an ORPort must answer a TLS handshake
  /// record (0x16), a DirPort an HTTP status line.
  static func classifyAnswer(_ answer: [UInt8], _ cls: RealTorTargetClass) -> String? {
    if answer.isEmpty { return "eof_error" }
    switch cls {
    case .dirauthORPorts, .relayORPorts:
      return answer[0] == 0x16 ? nil : "ssl_failed_handshake"
    case .dirauthDirPorts:
      return answer.starts(with: Array("HTTP/".utf8)) ? nil : "unknown_failure: not HTTP"
    case .bridgeObfs4: return nil
    }
  }

  /// errno as OONI's failure name (probe-cli netxlite errno_linux.go).
  static func failureName(errno code: Int32) -> String {
    switch code {
    case ETIMEDOUT, EAGAIN, EWOULDBLOCK: return "generic_timeout_error"
    case ECONNREFUSED: return "connection_refused"
    case ECONNRESET, EPIPE: return "connection_reset"
    case EHOSTUNREACH: return "host_unreachable"
    case ENETUNREACH: return "network_unreachable"
    default: return "unknown_failure: errno \(code)"
    }
  }

  /// A TLS 1.2 ClientHello a tor relay's OpenSSL answers (ECDHE-RSA/ECDSA with AES-GCM, the
  /// groups and signature algorithms it needs), no SNI, as OONI sends to an ORPort.
  static func clientHello() -> [UInt8] {
    func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    let suites: [UInt8] = [0xC0, 0x2F, 0xC0, 0x30, 0xC0, 0x2B, 0xC0, 0x2C, 0x00, 0x9E, 0x00, 0xFF]
    let groups: [UInt8] = [0x00, 0x1D, 0x00, 0x17, 0x00, 0x18]
    let signatures: [UInt8] = [
      0x04, 0x01, 0x05, 0x01, 0x06, 0x01, 0x08, 0x04, 0x08, 0x05, 0x08, 0x06, 0x04, 0x03, 0x05,
      0x03,
    ]
    var extensions: [UInt8] = []
    extensions += [0x00, 0x0A] + u16(groups.count + 2) + u16(groups.count) + groups
    extensions += [0x00, 0x0B, 0x00, 0x02, 0x01, 0x00]
    extensions += [0x00, 0x0D] + u16(signatures.count + 2) + u16(signatures.count) + signatures
    var body: [UInt8] = [0x03, 0x03] + (0..<32).map { _ in UInt8.random(in: 0...255) } + [0x00]
    body += u16(suites.count) + suites + [0x01, 0x00] + u16(extensions.count) + extensions
    let handshake: [UInt8] = [0x01, 0x00] + u16(body.count) + body
    return [0x16, 0x03, 0x01] + u16(handshake.count) + handshake
  }
}

import Foundation
import FoundationNetworkingShim

/// Runs an async body to completion from synchronous code.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
  let semaphore = DispatchSemaphore(value: 0)
  let box = ResultBox<T>()
  Task.detached {
    box.value = await body()
    semaphore.signal()
  }
  semaphore.wait()
  return box.value!
}

final class ResultBox<T>: @unchecked Sendable { var value: T? }

/// A one-connection SOCKS5 server that records the CONNECT request and refuses it (0x05).
final class RecordingSOCKSServer: @unchecked Sendable {
  let listener = LoopbackListener()
  private let lock = NSLock()
  private var request: (atyp: UInt8, host: String, port: UInt16)?
  var recorded: (atyp: UInt8, host: String, port: UInt16)? { lock.withLock { request } }

  init() {
    Thread.detachNewThread { [self] in
      let fd = listener.acceptOne()
      guard fd >= 0 else { return }
      defer { close(fd) }
      let greeting = readBytes(fd, 2)
      guard greeting.count == 2 else { return }
      _ = readBytes(fd, Int(greeting[1]))
      _ = write(fd, [5, 0], 2)
      let head = readBytes(fd, 4)
      guard head.count == 4 else { return }
      var host = ""
      switch head[3] {
      case 3:
        let length = readBytes(fd, 1).first ?? 0
        host = String(decoding: readBytes(fd, Int(length)), as: UTF8.self)
      case 1: host = readBytes(fd, 4).map(String.init).joined(separator: ".")
      default: host = "?"
      }
      let portBytes = readBytes(fd, 2)
      let port = portBytes.count == 2 ? UInt16(portBytes[0]) << 8 | UInt16(portBytes[1]) : 0
      lock.withLock { request = (head[3], host, port) }
      _ = write(fd, [5, 5, 0, 1, 0, 0, 0, 0, 0, 0], 10)
    }
  }
}

/// A one-request HTTP server answering 200 "ok"; `hits` counts requests.
final class TinyHTTPServer: @unchecked Sendable {
  let listener = LoopbackListener()
  private let lock = NSLock()
  private var count = 0
  var hits: Int { lock.withLock { count } }

  init() {
    Thread.detachNewThread { [self] in
      while true {
        let fd = listener.acceptOne()
        guard fd >= 0 else { return }
        var request: [UInt8] = []
        while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
          let chunk = readBytes(fd, 1)
          if chunk.isEmpty { break }
          request += chunk
        }
        lock.withLock { count += 1 }
        let response = Array(
          "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".utf8)
        _ = write(fd, response, response.count)
        close(fd)
      }
    }
  }
}

func torConfiguration(port: UInt16) -> URLSessionConfiguration {
  let configuration = URLSessionConfiguration.ephemeral
  configuration.waitsForConnectivity = true
  configuration.connectionProxyDictionary = [
    "SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": Int(port),
  ]
  return configuration
}

/// The FoundationNetworking shim: Apple's URLSession semantics with the `apple` transport, and
/// stock swift-corelibs behaviour (proxy ignored) with `linux-foundation`.
enum URLSessionChecks {
  static let all: [Check] = [
    Check("URLSession: waitsForConnectivity is assignable; the iOS SOCKS keys name the proxy") {
      let configuration = torConfiguration(port: 39050)
      guard configuration.waitsForConnectivity else { return "waitsForConnectivity not stored" }
      guard let proxy = configuration.socksProxy, proxy.host == "127.0.0.1", proxy.port == 39050
      else { return "proxy \(String(describing: configuration.socksProxy))" }
      configuration.connectionProxyDictionary = ["SOCKSEnable": 0, "SOCKSProxy": "127.0.0.1"]
      guard configuration.socksProxy == nil else { return "SOCKSEnable 0 still proxied" }
      return URLSessionConfiguration.default.socksProxy == nil ? nil : "default proxied"
    },
    Check(
      "URLSession apple: a proxied request sends the host name to the SOCKS proxy (no local DNS)"
    ) {
      BitchatTransport.current = .apple
      let socks = RecordingSOCKSServer()
      defer { socks.listener.close() }
      let session = URLSession(configuration: torConfiguration(port: socks.listener.port))
      let request = URLRequest(url: URL(string: "http://relays.example.invalid/list.csv")!)
      let outcome: String = blocking {
        do {
          _ = try await session.bytes(for: request)
          return "succeeded"
        } catch let error as URLError {
          return "URLError \(error.code.rawValue)"
        } catch {
          return "\(error)"
        }
      }
      guard let recorded = socks.recorded else { return "nothing reached the proxy (\(outcome))" }
      guard recorded.atyp == 3, recorded.host == "relays.example.invalid", recorded.port == 80
      else { return "CONNECT \(recorded)" }
      return outcome == "URLError \(URLError.Code.cannotConnectToHost.rawValue)"
        ? nil : "refused CONNECT gave \(outcome)"
    },
    Check("URLSession apple: a direct request reaches the server; response.url is the request's") {
      BitchatTransport.current = .apple
      let server = TinyHTTPServer()
      defer { server.listener.close() }
      let url = URL(string: "http://127.0.0.1:\(server.listener.port)/relays.csv")!
      let session = URLSession(configuration: .default)
      let outcome: String = blocking {
        do {
          let (bytes, response) = try await session.bytes(for: URLRequest(url: url))
          var body: [UInt8] = []
          for try await byte in bytes { body.append(byte) }
          guard let http = response as? HTTPURLResponse else { return "not HTTP" }
          return "\(http.statusCode) \(http.url == url) \(http.expectedContentLength) "
            + String(decoding: body, as: UTF8.self)
        } catch {
          return "\(error)"
        }
      }
      return outcome == "200 true 2 ok" ? nil : "got \(outcome)"
    },
    Check("URLSession linux-foundation: the proxy settings are ignored, the request goes direct") {
      BitchatTransport.current = .linuxFoundation
      defer { BitchatTransport.current = .apple }
      let socks = RecordingSOCKSServer()
      let server = TinyHTTPServer()
      defer {
        socks.listener.close()
        server.listener.close()
      }
      let session = URLSession(configuration: torConfiguration(port: socks.listener.port))
      let url = URL(string: "http://127.0.0.1:\(server.listener.port)/relays.csv")!
      let status: Int = blocking {
        ((try? await session.data(for: URLRequest(url: url)))?.1 as? HTTPURLResponse)?.statusCode
          ?? -1
      }
      guard status == 200, server.hits == 1 else { return "status \(status), hits \(server.hits)" }
      return socks.recorded == nil ? nil : "the proxy saw \(socks.recorded!)"
    },
    Check(
      "URLSessionWebSocketTask apple: send, receive and ping before the open wait; a refused proxy fails each"
    ) {
      BitchatTransport.current = .apple
      let socks = RecordingSOCKSServer()
      defer { socks.listener.close() }
      let session = URLSession(configuration: torConfiguration(port: socks.listener.port))
      let task = session.webSocketTask(with: URL(string: "wss://relay.example.invalid")!)
      let lock = NSLock()
      var results: [String] = []
      task.send(.string("[\"REQ\"]")) { error in
        lock.withLock { results.append("send \(error != nil)") }
      }
      task.receive { result in
        lock.withLock {
          if case .failure = result {
            results.append("receive failed")
          } else {
            results.append("receive ok")
          }
        }
      }
      task.sendPing { error in lock.withLock { results.append("ping \(error != nil)") } }
      usleep(100_000)
      guard lock.withLock({ results.isEmpty }) else { return "answered before resume: \(results)" }
      task.resume()
      guard waitUntil(3, { lock.withLock { results.count } == 3 }) else { return "got \(results)" }
      guard socks.recorded?.host == "relay.example.invalid", socks.recorded?.port == 443 else {
        return "CONNECT \(String(describing: socks.recorded))"
      }
      let all = lock.withLock { results.sorted() }
      return all == ["ping true", "receive failed", "send true"] ? nil : "got \(all)"
    },
  ]
}

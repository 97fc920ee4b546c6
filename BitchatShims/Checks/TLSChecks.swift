import FailClosedSupport
import Foundation
import FoundationNetworkingShim
import TLS

/// An HTTPS server on loopback presenting a certificate for `names` from `authority`, one
/// request at a time, answering 200 "ok".
final class TinyHTTPSServer: @unchecked Sendable {
  let listener = LoopbackListener()

  init(authority: TestCertificateAuthority, names: [String]) throws {
    let server = try TLSServer(authority: authority, defaultName: names[0], presenting: names)
    Thread.detachNewThread { [listener] in
      while true {
        let fd = listener.acceptOne()
        guard fd >= 0 else { return }
        let socket = Socket(adopting: fd)
        guard let connection = try? server.accept(socket, timeout: 5) else {
          socket.close()
          continue
        }
        var request: [UInt8] = []
        while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
          guard let chunk = try? connection.read(max: 4096), !chunk.isEmpty else { break }
          request += chunk
        }
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        try? connection.write(Array(response.utf8))
        connection.close()
      }
    }
  }
}

/// TLS as Apple's URLSession does it: the chain must lead to a trusted root and the
/// certificate must name the host; otherwise the request fails (-1200/-1202), no body.
enum TLSChecks {
  static func status(_ url: URL) -> String {
    BitchatTransport.current = .apple
    let session = URLSession(configuration: .ephemeral)
    return blocking {
      do {
        let (_, response) = try await session.data(for: URLRequest(url: url))
        return "\((response as? HTTPURLResponse)?.statusCode ?? -1)"
      } catch let error as URLError {
        return "URLError \(error.code.rawValue)"
      } catch {
        return "\(error)"
      }
    }
  }

  static let all: [Check] = [
    Check("URLSession apple: HTTPS verifies the chain and the host name (trusted: 200; else -1200)")
    {
      let authority = try TestCertificateAuthority(commonName: "check CA")
      let stranger = try TestCertificateAuthority(commonName: "another CA")
      let server = try TinyHTTPSServer(authority: authority, names: ["localhost"])
      let wrongName = try TinyHTTPSServer(authority: authority, names: ["relay.example"])
      defer {
        server.listener.close()
        wrongName.listener.close()
        AppleTransportSettings.trust = .system
      }
      let url = URL(string: "https://localhost:\(server.listener.port)/relays.csv")!
      AppleTransportSettings.trust = .pem(authority.rootCertificatePEM)
      let trusted = status(url)
      let misnamed = status(URL(string: "https://localhost:\(wrongName.listener.port)/")!)
      AppleTransportSettings.trust = .pem(stranger.rootCertificatePEM)
      let untrusted = status(url)
      let failed = "URLError \(URLError.Code.secureConnectionFailed.rawValue)"
      guard trusted == "200", misnamed == failed, untrusted == failed else {
        return "trusted \(trusted), wrong name \(misnamed), untrusted \(untrusted)"
      }
      return nil
    }
  ]
}

// The HTTP/1.1 response parser the system under test reads with (status line, interim 1xx,
// HEAD/204/304, chunked, Content-Length, close-delimited bodies, 101 upgrades), and the
// WebSocket handshake check on each head, in any split.
// fuzz: -max_len=4096
import HTTPCodec

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let method = input.choose(["GET", "HEAD", "POST", "CONNECT"])
  let limits = input.choose([
    HTTPLimits(), HTTPLimits(maxHeadBytes: 256, maxHeaderCount: 8, maxBodyBytes: 512),
  ])
  var parser = HTTPResponseParser(requestMethod: method, limits: limits)
  let key = WebSocketHandshake.key(nonce: Array(0..<16))
  do {
    for chunk in input.restInChunks() {
      for event in try parser.parse(chunk) {
        guard case .head(let head) = event else { continue }
        _ = try? WebSocketHandshake.verifyServerResponse(head, key: key)
      }
      if parser.isUpgraded {
        _ = parser.takeUpgradedBytes()
        return 0
      }
    }
    _ = try parser.finish()
  } catch {
    _ = "\(error)"
  }
  return 0
}

// The HTTP/1.1 request parser the world's servers read with (request line, headers, chunked
// and Content-Length bodies, smuggling refusals, pipelining), and the WebSocket upgrade check
// on each head, in any split.
// fuzz: -max_len=4096
import HTTPCodec

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let limits = input.choose([
    HTTPLimits(), HTTPLimits(maxHeadBytes: 256, maxHeaderCount: 8, maxBodyBytes: 512),
  ])
  var parser = HTTPRequestParser(limits: limits)
  do {
    for chunk in input.restInChunks() {
      for event in try parser.parse(chunk) {
        guard case .head(let head) = event else { continue }
        if WebSocketHandshake.isUpgradeRequest(head) {
          _ = try? WebSocketHandshake.serverResponse(for: head)
        }
      }
    }
    try parser.finish()
  } catch {
    _ = "\(error)"
  }
  return 0
}

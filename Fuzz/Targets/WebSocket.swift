// The WebSocket (RFC 6455) frame and message decoders, as client and as server: masking,
// 7/16/64-bit lengths, control frames, fragmentation, UTF-8 text, close codes, limits.
// fuzz: -max_len=4096
import HTTPCodec

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocket(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let role = input.choose([WebSocketFrameDecoder.Role.client, .server])
  let limits = input.choose([
    WebSocketLimits(), WebSocketLimits(maxFramePayload: 64, maxMessageBytes: 256),
  ])
  var decoder = WebSocketMessageDecoder(role: role, limits: limits)
  do {
    for chunk in input.restInChunks() {
      for message in try decoder.parse(chunk) {
        if case .close(let code?, _) = message {
          fuzzCheck(WebSocketMessageDecoder.isValidCloseCode(code), "close code \(code) accepted")
        }
      }
    }
  } catch {
    _ = "\(error)"
  }
  return 0
}

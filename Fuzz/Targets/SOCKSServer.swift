// The SOCKS server handshake (mock Tor's SOCKS port): SOCKS4/4a/5, auth, every command, in
// any split, as the listener drives it.
// fuzz: -max_len=1024
import SOCKS

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSOCKSServer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  var handshake = SOCKSServerHandshake(policy: input.choose([.tor, .arti]))
  var buffer: [UInt8] = []
  var stalled = 0
  for chunk in input.restInChunks() {
    buffer += chunk
    while true {
      let action = handshake.handle(buffer)
      fuzzCheck(action.consumed >= 0 && action.consumed <= buffer.count, "consumed out of range")
      buffer.removeFirst(action.consumed)
      switch action.outcome {
      case .needMoreInput:
        break
      case .continueHandshake:
        stalled = action.consumed == 0 ? stalled + 1 : 0
        fuzzCheck(stalled < 4, "continueHandshake without consuming")
        continue
      case .finished(let request):
        _ = request.address.description
        return 0
      case .failed(let error):
        _ = "\(error)"
        return 0
      }
      break
    }
  }
  return 0
}

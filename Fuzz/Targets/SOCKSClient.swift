// The SOCKS5 client handshake (the system under test's side): whatever a hostile proxy
// answers to the greeting, the authentication and the request, in any split.
// fuzz: -max_len=1024
import SOCKS

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSOCKSClient(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let credentials = input.choose([
    SOCKSClientHandshake.Credentials.none,
    .usernamePassword(username: Array("user".utf8), password: Array("pass".utf8)),
  ])
  let target = input.choose([
    SOCKSAddress.hostname("example.onion"), .ipv4([10, 0, 0, 1]),
    .ipv6([UInt8](repeating: 0, count: 15) + [1]),
  ])
  let command = input.choose(SOCKSCommand.allCases)
  guard
    var handshake = try? SOCKSClientHandshake(
      target: target, port: 443, command: command, credentials: credentials)
  else { return 0 }
  _ = handshake.greeting()
  var buffer: [UInt8] = []
  var stalled = 0
  for chunk in input.restInChunks() {
    buffer += chunk
    while !buffer.isEmpty {
      let action = handshake.handle(buffer)
      fuzzCheck(action.consumed >= 0 && action.consumed <= buffer.count, "consumed out of range")
      buffer.removeFirst(action.consumed)
      switch action.outcome {
      case .needMoreInput:
        stalled = 0
      case .failed, .finished:
        return 0
      default:
        stalled = action.consumed == 0 ? stalled + 1 : 0
        fuzzCheck(stalled < 4, "continue without consuming")
        continue
      }
      break
    }
  }
  return 0
}

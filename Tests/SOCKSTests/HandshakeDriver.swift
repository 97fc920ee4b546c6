import SOCKS

/// The result of feeding a whole byte string to a server handshake, step by step, the way
/// the mock's connection loop does.
struct ServerRun: Equatable {
  var replies: [UInt8] = []
  var outcome: SOCKSServerAction.Outcome = .needMoreInput
  var leftover: [UInt8] = []
  var steps = 0
}

/// Feeds `input` (optionally in `chunks`) to a fresh handshake until it finishes, fails or
/// needs more. Bounded: a handshake that loops without consuming fails the caller's #expect.
func runServer(_ input: [UInt8], policy: SOCKSServerPolicy = .tor, chunks: [Int]? = nil)
  -> ServerRun
{
  var handshake = SOCKSServerHandshake(policy: policy)
  var run = ServerRun()
  var buffer: [UInt8] = []
  var pending = input[...]
  var sizes = chunks ?? [input.count]
  while true {
    let size = sizes.isEmpty ? pending.count : min(sizes.removeFirst(), pending.count)
    buffer += pending.prefix(size)
    pending = pending.dropFirst(size)
    inner: while run.steps < 64 {
      run.steps += 1
      let action = handshake.handle(buffer)
      buffer.removeFirst(action.consumed)
      run.replies += action.reply
      run.outcome = action.outcome
      switch action.outcome {
      case .continueHandshake: continue
      case .needMoreInput: break inner
      case .finished, .failed:
        run.leftover = buffer + pending
        return run
      }
    }
    if pending.isEmpty || run.steps >= 64 {
      run.leftover = buffer
      return run
    }
  }
}

extension SOCKSServerAction.Outcome {
  var request: SOCKSRequest? {
    if case .finished(let request) = self { return request }
    return nil
  }
  var error: SOCKSError? {
    if case .failed(let error) = self { return error }
    return nil
  }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// SOCKS5 reply with BND 0.0.0.0:0, as tor sends it.
func socks5Reply(_ code: UInt8) -> [UInt8] { [0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0] }
let socks4Rejected: [UInt8] = [0x00, 0x5B, 0, 0, 0, 0, 0, 0]

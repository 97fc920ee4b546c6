// Control-port replies as a controller reads them: the reply parser (mid-reply, multi-line
// data, async events) and Onion Browser's controller acting on what tor answers.
// fuzz: -max_len=4096
import TorControl

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControlReply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let useController = input.byte() & 1 == 1
  let chunks = input.restInChunks()
  if useController {
    var controller = OnionBrowserController(
      configuration: .init(takeOwnership: true, bridgesConfigured: false))
    var now = 0.0
    _ = controller.start(at: now)
    for chunk in chunks {
      now += 0.1
      let output = controller.receive(chunk, at: now)
      if output.close || controller.stage == .closed { break }
      _ = controller.tick(at: now)
    }
    _ = controller.networkChanged(at: now + 1)
    _ = controller.stop(at: now + 2)
    return 0
  }
  var parser = ControlReplyParser(maximumLineBytes: 512)
  for chunk in chunks {
    parser.append(chunk)
    do {
      while let message = try parser.next() {
        fuzzCheck(!message.lines.isEmpty, "a message without lines")
        _ = message.keyValues
        _ = message.value(for: "PROGRESS")
      }
    } catch {
      _ = error.description
      break
    }
  }
  return 0
}

// Control-port replies as a controller reads them: the reply parser every controller in the
// project reads tor with (mid-reply splits, multi-line data, async events, long lines, the caps).
// fuzz: -max_len=4096
import TorControl

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControlReply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let maximum = input.choose([512, ControlReplyParser.defaultMaximumLineBytes])
  // Small caps together, so inputs of a few KiB reach the message cap too.
  let messageCap = maximum == 512 ? 2048 : ControlReplyParser.defaultMaximumMessageBytes
  var parser = ControlReplyParser(maximumLineBytes: maximum, maximumMessageBytes: messageCap)
  for chunk in input.restInChunks() {
    parser.append(chunk)
    do {
      while let message = try parser.next() {
        fuzzCheck(!message.lines.isEmpty, "a message without lines")
        _ = message.keyValues
        _ = message.value(for: "PROGRESS")
      }
      // Waiting for more, it holds at most a message and one unfinished line (and its CR).
      fuzzCheck(
        parser.bufferedByteCount <= messageCap + maximum + 1, "the parser outgrew its caps")
    } catch {
      _ = error.description
      break
    }
  }
  return 0
}

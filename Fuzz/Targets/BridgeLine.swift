// Bridge lines from the user's settings or --bridge: transport, address, fingerprint,
// key=value arguments. An accepted line goes into a torrc, so it must stay one line.
// fuzz: -max_len=2048
import SystemUnderTest
import TorControl

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBridgeLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  if let bridge = try? BridgeLine(text) {
    let rendered = bridge.description
    fuzzCheck(
      !rendered.contains(where: { $0.isNewline }),
      "an accepted bridge line spans lines: \(rendered)")
    fuzzCheck(
      (try? BridgeLine(rendered)) == bridge, "a bridge line does not read back: \(rendered)")
  }
  let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  _ = try? TorBridgeSettings.validate(lines)
  return 0
}

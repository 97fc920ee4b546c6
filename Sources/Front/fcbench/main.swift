import FailClosedSupport
import Foundation

// fcbench: the load generators for tools/bench. Prints one JSON object per measurement.
BlockingIO.ignoreSIGPIPE()
let usage = """
  Usage: fcbench socks --proxy HOST:PORT --label NAME [--quick] [--only connections|many]
         fcbench fidelity [--seconds S] [--payload BYTES] [--buffer-kib K] [--steps N]
           [--threads T] [--sender ring|packet|udp] [--batch N] [--qdisc-bypass]
           [--drop-in-sink]
           (needs root: builds a sandbox, searches the highest zero-drop capture rate)
  (captures for the audit benchmark come from `failclosed gen-pcap`)
  """
let arguments = Array(CommandLine.arguments.dropFirst())
func value(_ name: String) -> String? {
  guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else {
    return nil
  }
  return arguments[index + 1]
}
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
do {
  switch arguments.first {
  case "socks":
    guard let proxyText = value("proxy"), let proxy = SocketAddress(proxyText) else {
      throw SystemError("--proxy HOST:PORT", code: EINVAL)
    }
    let result = try SOCKSLoad.run(
      proxy: proxy, label: value("label") ?? proxyText, quick: arguments.contains("--quick"),
      only: value("only"))
    print(String(decoding: try encoder.encode(result), as: UTF8.self))
  case "fidelity":
    var options = CaptureFidelity.Options()
    func number(_ name: String, _ range: ClosedRange<Double>) throws -> Double? {
      guard let text = value(name) else { return nil }
      guard let number = Double(text), range.contains(number) else {
        throw SystemError("--\(name) \(text): expected a number in \(range)", code: EINVAL)
      }
      return number
    }
    options.seconds = try number("seconds", 0.5...600) ?? options.seconds
    options.payloadBytes = Int(try number("payload", 1...1400) ?? Double(options.payloadBytes))
    if let kib = try number("buffer-kib", 4...1_048_576) { options.bufferBytes = Int32(kib) * 1024 }
    options.bisectionSteps = Int(try number("steps", 0...10) ?? Double(options.bisectionSteps))
    options.threads = Int(try number("threads", 1...16) ?? Double(options.threads))
    // sendmmsg(2) takes 1,024 messages at most.
    options.batch = Int(try number("batch", 1...1024) ?? Double(options.batch))
    if let sender = value("sender") {
      guard ["ring", "packet", "udp"].contains(sender) else {
        throw SystemError("--sender \(sender): expected ring, packet or udp", code: EINVAL)
      }
      options.sender = sender
    }
    options.qdiscBypass = arguments.contains("--qdisc-bypass")
    options.dropAtIngress = !arguments.contains("--drop-in-sink")
    let result = try CaptureFidelity.run(options)
    print(String(decoding: try encoder.encode(result), as: UTF8.self))
  default:
    print(usage)
    exit(2)
  }
} catch {
  FileHandle.standardError.write(Data("fcbench: \(error)\n".utf8))
  exit(2)
}

import FailClosedSupport
import Foundation

// fcbench: the SOCKS load generator for tools/bench. Prints one JSON object per measurement.
BlockingIO.ignoreSIGPIPE()
let usage = """
  Usage: fcbench socks --proxy HOST:PORT --label NAME [--quick]
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
      proxy: proxy, label: value("label") ?? proxyText, quick: arguments.contains("--quick"))
    print(String(decoding: try encoder.encode(result), as: UTF8.self))
  default:
    print(usage)
    exit(2)
  }
} catch {
  FileHandle.standardError.write(Data("fcbench: \(error)\n".utf8))
  exit(2)
}

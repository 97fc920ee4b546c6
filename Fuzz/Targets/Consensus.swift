// The network-status consensus of the private network (r and s lines), which becomes the
// audit's allowlist on the real-Tor lane; and tor's bootstrap log lines read beside it.
// fuzz: -max_len=8192
import Testnet

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConsensus(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  if let consensus = try? Consensus(text: text) {
    for router in consensus.routers {
      fuzzCheck(!router.address.isEmpty, "a router without an address")
    }
  }
  _ = BootstrapLogLine.all(in: text)
  _ = BootstrapProblemLine.all(in: text)
  return 0
}

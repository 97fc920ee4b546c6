// The fake guard's tunnel request (mock Tor to guard, over TCP): magic, host, port.
// fuzz: -max_len=512
import Sandbox

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGuardTunnel(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if let (request, used) = try? GuardTunnel.decode(bytes) {
    fuzzCheck(used <= bytes.count, "took \(used) of \(bytes.count) bytes")
    fuzzCheck((try? GuardTunnel.decode(GuardTunnel.encode(request))) != nil, "does not read back")
  }
  return 0
}

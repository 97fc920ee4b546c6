// The audit's plain-HTTP recogniser: the request line and the Host header of a TCP segment.
// fuzz: -max_len=4096
import Audit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPHost(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let segment = UnsafeRawBufferPointer(start: data, count: size)
  if HTTPHostParser.mayBeRequest(segment) {
    _ = HTTPHostParser.host(segment)
  }
  _ = HTTPHostParser.host(segment)
  return 0
}

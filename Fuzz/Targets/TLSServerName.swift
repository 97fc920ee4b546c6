// The TLS ClientHello SNI extractor the audit names TLS leaks with: record and handshake
// lengths, session ID, cipher suites, compression, extensions, the server_name list.
// fuzz: -max_len=4096
import Audit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTLSServerName(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let segment = UnsafeRawBufferPointer(start: data, count: size)
  _ = TLSClientHelloParser.looksLikeClientHello(segment)
  if let name = TLSClientHelloParser.serverName(segment) {
    fuzzCheck(name.utf8.count <= 4 * size, "a name longer than its input")
  }
  return 0
}

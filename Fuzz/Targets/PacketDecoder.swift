// The packet decoder for every link type (Ethernet, Linux SLL and SLL2, raw IPv4/IPv6,
// NULL/LOOP): IPv4/IPv6 extension headers, fragments, ICMP quotes, transport headers; then
// the DNS, TLS and HTTP payload parsers a leak is named with, on the payload the decoder
// points at. Input: link type, then frames, each after a 2-byte length. (A fresh Auditor per
// input costs ~2 ms of table zeroing under ASan: the policy and the auditor's tables are
// fuzzed through the PcapFile target.)
// fuzz: -max_len=8192
import Audit

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPacketDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let decoder = PacketDecoder(linkType: input.choose(LinkType.allCases))
  let frames = input.rest
  var offset = 0
  while offset < frames.count {
    let length = offset + 1 < frames.count ? Int(frames[offset]) << 8 | Int(frames[offset + 1]) : 0
    let start = offset + 2
    let end = min(start + length, frames.count)
    let frame = start < end ? Array(frames[start..<end]) : []
    offset = max(end, start)
    frame.withUnsafeBytes { bytes in
      let packet = decoder.decode(bytes)
      fuzzCheck(
        packet.payloadOffset >= 0 && packet.payloadLength >= 0
          && packet.payloadOffset + packet.payloadLength <= bytes.count,
        "payload \(packet.payloadOffset)+\(packet.payloadLength) outside a \(bytes.count)-byte frame"
      )
      let payload = UnsafeRawBufferPointer(
        rebasing: bytes[packet.payloadOffset..<(packet.payloadOffset + packet.payloadLength)])
      _ = DNSQuestionParser.questionNames(payload)
      _ = DNSQuestionParser.questionNamesOverTCP(payload)
      if TLSClientHelloParser.looksLikeClientHello(payload) {
        _ = TLSClientHelloParser.serverName(payload)
      }
      if HTTPHostParser.mayBeRequest(payload) { _ = HTTPHostParser.host(payload) }
      _ = packet.sourceEndpoint.description
    }
  }
  return 0
}

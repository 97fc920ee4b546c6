// DNS names as the audit and the world's resolvers read them from the wire: compression
// pointers (loops, out of range, forward), label lengths, the TCP length prefix, queries
// the fake and poisoning resolvers answer, and the addresses read back from answers.
// fuzz: -max_len=1024
import Audit
import Sandbox

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDNSName(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let message = Array(UnsafeBufferPointer(start: data, count: size))
  message.withUnsafeBytes { bytes in
    _ = DNSQuestionParser.isQuery(bytes)
    for name in DNSQuestionParser.questionNames(bytes) {
      fuzzCheck(name.utf8.count <= 4 * 255, "a name longer than DNS allows: \(name.utf8.count)")
    }
    _ = DNSQuestionParser.questionNamesOverTCP(bytes)
  }
  if let query = try? DNSMessage.parseQuery(message) {
    fuzzCheck(query.questionEnd <= message.count, "question ends past the message")
    if let answer = try? DNSMessage.answer(to: message, address: [10, 66, 1, 20]) {
      _ = DNSMessage.answerAddresses(answer)
    }
    _ = try? DNSMessage.answer(to: message, address: nil)
  }
  _ = DNSMessage.answerAddresses(message)
  return 0
}

import Digest
import Foundation
import Testing

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02X", $0) }.joined() }

@Suite struct SHA256Tests {
  @Test func knownAnswers() {
    #expect(
      hex(SHA256.hash(Array("abc".utf8)))
        == "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD")
    #expect(
      hex(SHA256.hash([]))
        == "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855")
    let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
    #expect(
      hex(SHA256.hash(long))
        == "248D6A61D20638B8E5C026930C3E6039A33CE45964FF2167F6ECEDD419DB06C1")
    // RFC 4231 test case 2.
    #expect(
      hex(
        SHA256.hmac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
        == "5BDCC146BF60754E6A042426089575C75A003F089D2739839DEC58B964EC3843")
  }
}

import Digest
import Foundation
import Testing

@Suite struct SHA1Tests {
  // FIPS 180 examples, plus a message that spans two padding blocks.
  @Test(arguments: [
    ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
    ),
  ])
  func knownDigests(_ message: String, _ hex: String) {
    let digest = SHA1.digest(Array(message.utf8))
    #expect(digest.map { String(format: "%02x", $0) }.joined() == hex)
  }
}

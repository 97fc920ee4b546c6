import Digest
import Foundation
import Testing

/// Every message length around the padding boundaries (55, 56, 63, 64 and the next block),
/// against the openssl command line tool.
@Suite struct OpenSSLAgreementTests {
  static func openssl(_ algorithm: String, _ message: [UInt8]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
    process.arguments = ["dgst", "-\(algorithm)", "-r"]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    input.fileHandleForWriting.write(Data(message))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
  }

  static func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }

  @Test func sha1AndSHA256AgreeWithOpenSSLOnEveryLengthUpTo130() throws {
    for length in 0...130 {
      let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
      #expect(Self.hex(SHA1.digest(message)) == (try Self.openssl("sha1", message)), "\(length)")
      #expect(Self.hex(SHA256.hash(message)) == (try Self.openssl("sha256", message)), "\(length)")
    }
  }
}

// NIP-44 version 2 encryption (what bitchat's seals and gift wraps carry): ECDH on secp256k1,
// HKDF-SHA256, ChaCha20 (OpenSSL) and HMAC-SHA256, with NIP-44's padding. Encryption only:
// nothing here reads a private message.
import COpenSSL
import Foundation

enum NIP44 {
  static func hmac(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
    var block = key.count > 64 ? Secp256k1.sha256(key) : key
    block += [UInt8](repeating: 0, count: 64 - block.count)
    let inner = Secp256k1.sha256(block.map { $0 ^ 0x36 } + data)
    return Secp256k1.sha256(block.map { $0 ^ 0x5c } + inner)
  }

  /// HKDF-Expand (RFC 5869) with SHA-256.
  static func expand(_ prk: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
    var output: [UInt8] = []
    var previous: [UInt8] = []
    var counter: UInt8 = 1
    while output.count < length {
      previous = hmac(key: prk, previous + info + [counter])
      output += previous
      counter += 1
    }
    return Array(output.prefix(length))
  }

  /// NIP-44's padded length for a plaintext of `length` bytes.
  static func paddedLength(_ length: Int) -> Int {
    if length <= 32 { return 32 }
    let nextPower = 1 << (Int.bitWidth - (length - 1).leadingZeroBitCount)
    let chunk = nextPower <= 256 ? 32 : nextPower / 8
    return chunk * ((length - 1) / chunk + 1)
  }

  static func chacha20(key: [UInt8], nonce: [UInt8], _ data: [UInt8]) throws -> [UInt8] {
    guard let context = EVP_CIPHER_CTX_new() else { throw SchnorrError.openSSL("cipher") }
    defer { EVP_CIPHER_CTX_free(context) }
    // OpenSSL's ChaCha20 IV: a 32-bit little-endian block counter (0), then the 96-bit nonce.
    let iv = [UInt8](repeating: 0, count: 4) + nonce
    var output = [UInt8](repeating: 0, count: data.count)
    var written: Int32 = 0
    guard EVP_EncryptInit_ex(context, EVP_chacha20(), nil, key, iv) == 1,
      EVP_EncryptUpdate(context, &output, &written, data, Int32(data.count)) == 1
    else { throw SchnorrError.openSSL("ChaCha20") }
    return output
  }

  /// NIP-44's conversation key: HKDF-Extract with salt "nip44-v2" of the ECDH x coordinate.
  static func conversationKey(_ sender: SchnorrSigningKey, _ recipient: [UInt8]) throws -> [UInt8] {
    hmac(key: Array("nip44-v2".utf8), try sender.sharedX(with: recipient))
  }

  /// The base64 payload (version 2, nonce, ciphertext, MAC) of `plaintext` from `sender` to the
  /// x-only public key `recipient`.
  static func encrypt(_ plaintext: String, from sender: SchnorrSigningKey, to recipient: [UInt8])
    throws -> String
  {
    try encrypt(
      plaintext, conversationKey: conversationKey(sender, recipient), nonce: Secp256k1.random(32))
  }

  /// The payload with a given conversation key and 32-byte nonce (the test vectors').
  static func encrypt(_ plaintext: String, conversationKey: [UInt8], nonce: [UInt8]) throws
    -> String
  {
    let message = Array(plaintext.utf8)
    guard (1...65_535).contains(message.count) else { throw SchnorrError.openSSL("length") }
    let keys = expand(conversationKey, info: nonce, length: 76)
    let padded =
      [UInt8(message.count >> 8), UInt8(message.count & 0xff)] + message
      + [UInt8](repeating: 0, count: paddedLength(message.count) - message.count)
    let ciphertext = try chacha20(
      key: Array(keys[0..<32]), nonce: Array(keys[32..<44]), padded)
    let mac = hmac(key: Array(keys[44..<76]), nonce + ciphertext)
    return Data([2] + nonce + ciphertext + mac).base64EncodedString()
  }
}

// BIP-340 Schnorr signatures over secp256k1, as bitchat's P256K.Schnorr gives them to its Nostr
// events, built on OpenSSL's secp256k1 group (Debian's libssl; no secp256k1 library here).
// Only what the stand-ins need: key generation, x-only public keys, sign, verify, and the ECDH
// x coordinate NIP-44 derives its keys from.
import COpenSSL
import Foundation

enum SchnorrError: Error {
  case badKey, badSignature
  case openSSL(String)
}

/// The curve's constants and BIGNUM helpers; every call owns its BN_CTX.
enum Secp256k1 {
  /// Big-endian 32 bytes of a BIGNUM.
  static func bytes(_ value: OpaquePointer) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    _ = BN_bn2binpad(value, &out, 32)
    return out
  }

  static func number(_ bytes: [UInt8]) -> OpaquePointer {
    BN_bin2bn(bytes, Int32(bytes.count), nil)
  }

  /// Runs `body` with the group, its order n and field prime p, and a context.
  static func with<T>(
    _ body: (OpaquePointer, OpaquePointer, OpaquePointer, OpaquePointer) throws -> T
  ) throws -> T {
    guard let group = EC_GROUP_new_by_curve_name(NID_secp256k1), let context = BN_CTX_new(),
      let prime = BN_new()
    else { throw SchnorrError.openSSL("secp256k1 group") }
    defer {
      EC_GROUP_free(group)
      BN_CTX_free(context)
      BN_free(prime)
    }
    guard let order = EC_GROUP_get0_order(group),
      EC_GROUP_get_curve(group, prime, nil, nil, context) == 1
    else { throw SchnorrError.openSSL("curve parameters") }
    return try body(group, order, prime, context)
  }

  /// (x, y is even) of a point.
  static func affine(_ group: OpaquePointer, _ point: OpaquePointer, _ context: OpaquePointer)
    -> ([UInt8], Bool)?
  {
    guard let x = BN_new(), let y = BN_new() else { return nil }
    defer {
      BN_free(x)
      BN_free(y)
    }
    guard EC_POINT_get_affine_coordinates(group, point, x, y, context) == 1 else { return nil }
    return (bytes(x), BN_is_odd(y) == 0)
  }

  /// The point with x coordinate `x` and even y (BIP-340's lift_x), or nil.
  static func lift(_ group: OpaquePointer, _ x: [UInt8], _ context: OpaquePointer)
    -> OpaquePointer?
  {
    guard x.count == 32, let point = EC_POINT_new(group) else { return nil }
    let number = number(x)
    defer { BN_free(number) }
    guard EC_POINT_set_compressed_coordinates(group, point, number, 0, context) == 1 else {
      EC_POINT_free(point)
      return nil
    }
    return point
  }

  /// scalar·G + other·point (either part may be absent).
  static func multiply(
    _ group: OpaquePointer, generator: OpaquePointer?, point: OpaquePointer? = nil,
    by other: OpaquePointer? = nil, _ context: OpaquePointer
  ) -> OpaquePointer? {
    guard let result = EC_POINT_new(group) else { return nil }
    guard EC_POINT_mul(group, result, generator, point, other, context) == 1 else {
      EC_POINT_free(result)
      return nil
    }
    return result
  }

  static func sha256(_ data: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 32)
    _ = SHA256(data, data.count, &out)
    return out
  }

  /// BIP-340's tagged hash.
  static func taggedHash(_ tag: String, _ data: [UInt8]) -> [UInt8] {
    let tagHash = sha256(Array(tag.utf8))
    return sha256(tagHash + tagHash + data)
  }

  static func random(_ count: Int) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    _ = RAND_bytes(&out, Int32(count))
    return out
  }
}

/// A BIP-340 signing key (P256K.Schnorr.PrivateKey in the app).
struct SchnorrSigningKey {
  let secret: [UInt8]

  /// A fresh key: 32 random bytes in [1, n).
  static func generate() throws -> SchnorrSigningKey {
    try Secp256k1.with { _, order, _, _ in
      while true {
        let candidate = Secp256k1.random(32)
        let number = Secp256k1.number(candidate)
        defer { BN_free(number) }
        if BN_is_zero(number) == 0 && BN_cmp(number, order) < 0 {
          return SchnorrSigningKey(secret: candidate)
        }
      }
    }
  }

  /// The x-only public key.
  func publicKey() throws -> [UInt8] {
    try Secp256k1.with { group, _, _, context in
      let scalar = Secp256k1.number(secret)
      defer { BN_free(scalar) }
      guard let point = Secp256k1.multiply(group, generator: scalar, context),
        let (x, _) = Secp256k1.affine(group, point, context)
      else { throw SchnorrError.badKey }
      EC_POINT_free(point)
      return x
    }
  }

  /// BIP-340 sign of a 32-byte message, with fresh auxiliary randomness.
  func sign(_ message: [UInt8]) throws -> [UInt8] {
    try sign(message, auxiliary: Secp256k1.random(32))
  }

  /// BIP-340 sign with the given 32 bytes of auxiliary randomness (the test vectors' aux_rand).
  func sign(_ message: [UInt8], auxiliary random: [UInt8]) throws -> [UInt8] {
    try Secp256k1.with { group, order, _, context in
      let d = Secp256k1.number(secret)
      defer { BN_free(d) }
      guard let publicPoint = Secp256k1.multiply(group, generator: d, context),
        let (publicX, evenY) = Secp256k1.affine(group, publicPoint, context)
      else { throw SchnorrError.badKey }
      EC_POINT_free(publicPoint)
      if !evenY { BN_sub(d, order, d) }
      let auxiliary = Secp256k1.taggedHash("BIP0340/aux", random)
      let t = zip(Secp256k1.bytes(d), auxiliary).map { $0 ^ $1 }
      let nonce = Secp256k1.number(
        Secp256k1.taggedHash("BIP0340/nonce", t + publicX + message))
      defer { BN_free(nonce) }
      BN_nnmod(nonce, nonce, order, context)
      guard BN_is_zero(nonce) == 0,
        let noncePoint = Secp256k1.multiply(group, generator: nonce, context),
        let (r, evenR) = Secp256k1.affine(group, noncePoint, context)
      else { throw SchnorrError.openSSL("nonce") }
      EC_POINT_free(noncePoint)
      if !evenR { BN_sub(nonce, order, nonce) }
      let e = Secp256k1.number(
        Secp256k1.taggedHash("BIP0340/challenge", r + publicX + message))
      defer { BN_free(e) }
      BN_nnmod(e, e, order, context)
      guard let s = BN_new() else { throw SchnorrError.openSSL("BN_new") }
      defer { BN_free(s) }
      BN_mod_mul(s, e, d, order, context)
      BN_mod_add(s, s, nonce, order, context)
      return r + Secp256k1.bytes(s)
    }
  }

  /// The x coordinate of secret·lift_x(peer): the ECDH secret NIP-44 starts from.
  func sharedX(with peer: [UInt8]) throws -> [UInt8] {
    try Secp256k1.with { group, _, _, context in
      guard let point = Secp256k1.lift(group, peer, context) else { throw SchnorrError.badKey }
      defer { EC_POINT_free(point) }
      let scalar = Secp256k1.number(secret)
      defer { BN_free(scalar) }
      guard
        let shared = Secp256k1.multiply(group, generator: nil, point: point, by: scalar, context),
        let (x, _) = Secp256k1.affine(group, shared, context)
      else { throw SchnorrError.badKey }
      EC_POINT_free(shared)
      return x
    }
  }
}

enum Schnorr {
  /// BIP-340 verify: false for any malformed key or signature.
  static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
    guard signature.count == 64, publicKey.count == 32 else { return false }
    return
      (try? Secp256k1.with { group, order, prime, context -> Bool in
        guard let point = Secp256k1.lift(group, publicKey, context) else { return false }
        defer { EC_POINT_free(point) }
        let r = Secp256k1.number(Array(signature[0..<32]))
        let s = Secp256k1.number(Array(signature[32..<64]))
        defer {
          BN_free(r)
          BN_free(s)
        }
        guard BN_cmp(r, prime) < 0, BN_cmp(s, order) < 0 else { return false }
        let e = Secp256k1.number(
          Secp256k1.taggedHash(
            "BIP0340/challenge", Array(signature[0..<32]) + publicKey + message))
        defer { BN_free(e) }
        BN_nnmod(e, e, order, context)
        // R = s·G - e·P = s·G + (n - e)·P
        BN_sub(e, order, e)
        guard let rPoint = Secp256k1.multiply(group, generator: s, point: point, by: e, context)
        else { return false }
        defer { EC_POINT_free(rPoint) }
        guard EC_POINT_is_at_infinity(group, rPoint) == 0,
          let (x, even) = Secp256k1.affine(group, rPoint, context)
        else { return false }
        return even && x == Array(signature[0..<32])
      }) ?? false
  }
}

extension Array where Element == UInt8 {
  var nostrHex: String { map { String(format: "%02x", $0) }.joined() }

  init?(nostrHex hex: String) {
    guard hex.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
      bytes.append(byte)
      index = next
    }
    self = bytes
  }
}

// bitchat's NostrEvent and NostrIdentity (NIP-01): real ids (SHA-256 of the canonical
// serialization) and real BIP-340 signatures (Schnorr.swift), so NostrRelayManager's inbound
// check (`isValidSignature()`, its only verification point) drops a tampered event as the app
// does. bitchat's own tests sign events and tamper with them.
import Foundation

struct NostrEvent: Codable {
  var id: String
  var pubkey: String
  // NIP-01's field name, which bitchat's code reads as is.
  // swift-format-ignore: AlwaysUseLowerCamelCase
  var created_at: Int
  var kind: Int
  var tags: [[String]]
  var content: String
  var sig: String?

  init(
    id: String, pubkey: String, created_at: Int, kind: Int, tags: [[String]], content: String,
    sig: String?
  ) {
    self.id = id
    self.pubkey = pubkey
    self.created_at = created_at
    self.kind = kind
    self.tags = tags
    self.content = content
    self.sig = sig
  }

  /// An unsigned event, as the app builds one before `sign(with:)`.
  init(
    pubkey: String, createdAt: Date, kind: NostrProtocol.EventKind, tags: [[String]],
    content: String
  ) {
    self.init(
      id: "", pubkey: pubkey, created_at: Int(createdAt.timeIntervalSince1970), kind: kind.rawValue,
      tags: tags, content: content, sig: nil)
  }

  init(from dictionary: [String: Any]) throws {
    guard let id = dictionary["id"] as? String, let pubkey = dictionary["pubkey"] as? String,
      let createdAt = dictionary["created_at"] as? Int, let kind = dictionary["kind"] as? Int,
      let content = dictionary["content"] as? String
    else { throw NostrEventError.malformed }
    self.init(
      id: id, pubkey: pubkey, created_at: createdAt, kind: kind,
      tags: dictionary["tags"] as? [[String]] ?? [], content: content,
      sig: dictionary["sig"] as? String)
  }

  /// NIP-01's serialization `[0,pubkey,created_at,kind,tags,content]`, whose SHA-256 is the id.
  var canonicalSerialization: String {
    func quoted(_ text: String) -> String {
      var out = "\""
      for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{08}": out += "\\b"
        case "\u{0C}": out += "\\f"
        case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
      }
      return out + "\""
    }
    let tagList = tags.map { "[" + $0.map(quoted).joined(separator: ",") + "]" }
    return "[0,\(quoted(pubkey)),\(created_at),\(kind),[\(tagList.joined(separator: ","))],"
      + "\(quoted(content))]"
  }

  var computedID: [UInt8] { Secp256k1.sha256(Array(canonicalSerialization.utf8)) }

  /// The event with its id and a BIP-340 signature by `key` (whose public key must be pubkey).
  func sign(with key: SchnorrSigningKey) throws -> NostrEvent {
    var signed = self
    let id = computedID
    signed.id = id.nostrHex
    signed.sig = try key.sign(id).nostrHex
    return signed
  }

  /// The id is the hash of the content and the signature verifies against pubkey.
  func isValidSignature() -> Bool {
    guard let sig, let signature = [UInt8](nostrHex: sig),
      let publicKey = [UInt8](nostrHex: pubkey), let claimed = [UInt8](nostrHex: id)
    else { return false }
    let id = computedID
    return claimed == id && Schnorr.verify(signature: signature, message: id, publicKey: publicKey)
  }

  /// The event as a JSON object (for a seal's or gift wrap's encrypted content).
  var jsonString: String {
    var object: [String: Any] = [
      "id": id, "pubkey": pubkey, "created_at": created_at, "kind": kind, "tags": tags,
      "content": content,
    ]
    if let sig { object["sig"] = sig }
    let data =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    return String(decoding: data, as: UTF8.self)
  }
}

enum NostrEventError: Error { case malformed }

/// bitchat's NostrIdentity: a Nostr key pair.
struct NostrIdentity {
  let signingKey: SchnorrSigningKey
  let publicKeyHex: String

  static func generate() throws -> NostrIdentity {
    let key = try SchnorrSigningKey.generate()
    return NostrIdentity(signingKey: key, publicKeyHex: try key.publicKey().nostrHex)
  }

  func schnorrSigningKey() throws -> SchnorrSigningKey { signingKey }
}

extension NostrProtocol {
  /// NIP-17 private message: the unsigned kind-14 rumor sealed (kind 13, NIP-44 encrypted to
  /// the recipient, signed by the sender) and gift-wrapped (kind 1059, NIP-44 encrypted with a
  /// one-time key that signs it, tagged with the recipient), times randomised up to two days
  /// back as NIP-59 says.
  static func createPrivateMessage(
    content: String, recipientPubkey: String, senderIdentity: NostrIdentity
  ) throws -> NostrEvent {
    guard let recipient = [UInt8](nostrHex: recipientPubkey), recipient.count == 32 else {
      throw SchnorrError.badKey
    }
    func randomisedNow() -> Date { Date().addingTimeInterval(-Double.random(in: 0..<172_800)) }
    var rumor = NostrEvent(
      pubkey: senderIdentity.publicKeyHex, createdAt: Date(), kind: .dm,
      tags: [["p", recipientPubkey]], content: content)
    rumor.id = rumor.computedID.nostrHex
    let seal = try NostrEvent(
      pubkey: senderIdentity.publicKeyHex, createdAt: randomisedNow(), kind: .seal, tags: [],
      content: NIP44.encrypt(
        rumor.jsonString, from: senderIdentity.signingKey, to: recipient)
    ).sign(with: senderIdentity.signingKey)
    let wrapper = try NostrIdentity.generate()
    return try NostrEvent(
      pubkey: wrapper.publicKeyHex, createdAt: randomisedNow(), kind: .giftWrap,
      tags: [["p", recipientPubkey]],
      content: NIP44.encrypt(seal.jsonString, from: wrapper.signingKey, to: recipient)
    ).sign(with: wrapper.signingKey)
  }
}

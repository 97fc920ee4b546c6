// The app stand-ins' cryptography against the specifications' own test vectors (BIP-340's
// test-vectors.csv rows 0 and 1; NIP-44's nip44.vectors.json v2), each with a canary that must
// fail. Built with Schnorr.swift and NIP44.swift in the tests' package (`failclosed
// bitchat-tests`); one JSON line per check, exit 1 if any fails.
import Foundation

var failed = false

func check(_ name: String, _ ok: Bool, _ detail: String = "") {
  if !ok { failed = true }
  let object: [String: Any] = ["check": name, "ok": ok, "detail": detail]
  let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
  print(String(decoding: data, as: UTF8.self))
}

func bytes(_ hex: String) -> [UInt8] { [UInt8](nostrHex: hex.lowercased())! }

// (secret key, public key, aux_rand, message, signature)
let bip340 = [
  (
    "0000000000000000000000000000000000000000000000000000000000000003",
    "F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA8215"
      + "25F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0"
  ),
  (
    "B7E151628AED2A6ABF7158809CF4F3C762E7160F38B4DA56A784D9045190CFEF",
    "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
    "0000000000000000000000000000000000000000000000000000000000000001",
    "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
    "6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE3341"
      + "8906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A"
  ),
]
for (index, vector) in bip340.enumerated() {
  let key = SchnorrSigningKey(secret: bytes(vector.0))
  let publicKey = (try? key.publicKey()) ?? []
  check("BIP-340 vector \(index): public key", publicKey == bytes(vector.1), publicKey.nostrHex)
  let signature = (try? key.sign(bytes(vector.3), auxiliary: bytes(vector.2))) ?? []
  check("BIP-340 vector \(index): signature", signature == bytes(vector.4), signature.nostrHex)
  check(
    "BIP-340 vector \(index): verifies",
    Schnorr.verify(signature: bytes(vector.4), message: bytes(vector.3), publicKey: bytes(vector.1))
  )
  var tampered = bytes(vector.4)
  tampered[63] ^= 1
  check(
    "BIP-340 vector \(index): canary, a changed signature does not verify",
    !Schnorr.verify(signature: tampered, message: bytes(vector.3), publicKey: bytes(vector.1)))
  var otherMessage = bytes(vector.3)
  otherMessage[0] ^= 1
  check(
    "BIP-340 vector \(index): canary, another message does not verify",
    !Schnorr.verify(signature: bytes(vector.4), message: otherMessage, publicKey: bytes(vector.1)))
}
check(
  "BIP-340: canary, an all-zero signature does not verify",
  !Schnorr.verify(
    signature: [UInt8](repeating: 0, count: 64), message: bytes(bip340[0].3),
    publicKey: bytes(bip340[0].1)))

// NIP-44 v2: get_conversation_key, and encrypt_decrypt's first case.
let conversation = [
  (
    "315e59ff51cb9209768cf7da80791ddcaae56ac9775eb25b6dee1234bc5d2268",
    "c2f9d9948dc8c7c38321e4b85c8558872eafa0641cd269db76848a6073e69133",
    "3dfef0ce2a4d80a25e7a328accf73448ef67096f65f79588e358d9a0eb9013f1"
  ),
  (
    "0000000000000000000000000000000000000000000000000000000000000001",
    "c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5",
    "c41c775356fd92eadc63ff5a0dc1da211b268cbea22316767095b2871ea1412d"
  ),
]
for (index, vector) in conversation.enumerated() {
  let key =
    (try? NIP44.conversationKey(SchnorrSigningKey(secret: bytes(vector.0)), bytes(vector.1)))
  check("NIP-44 conversation key \(index)", key == bytes(vector.2), key?.nostrHex ?? "error")
}
let payload = try? NIP44.encrypt(
  "a", conversationKey: bytes(conversation[1].2),
  nonce: bytes("0000000000000000000000000000000000000000000000000000000000000001"))
check(
  "NIP-44 encrypt 'a' with nonce 1",
  payload
    == "AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABee0G5VSK0/9YypIObAtDKfYEAjD35uVkHyB0F4DwrcNaCXlCWZKaArsGrY6M9wnuTMxWfp1RTN9Xga8no+kF5Vsb",
  payload ?? "error")
check(
  "NIP-44 padding: 1 -> 32, 32 -> 32, 33 -> 64, 257 -> 320",
  [1, 32, 33, 257].map(NIP44.paddedLength) == [32, 32, 64, 320])

// A signed event verifies; the same event with another content does not.
if let identity = try? NostrIdentity.generate(),
  let event = try? NostrEvent(
    pubkey: identity.publicKeyHex, createdAt: Date(), kind: .textNote, tags: [["t", "x\"y"]],
    content: "line\none"
  ).sign(with: identity.schnorrSigningKey())
{
  check("NostrEvent: a signed event verifies", event.isValidSignature())
  var changed = event
  changed.content = "line\ntwo"
  check("NostrEvent: canary, changed content does not verify", !changed.isValidSignature())
} else {
  check("NostrEvent: signing", false, "could not sign")
}
exit(failed ? 1 : 0)

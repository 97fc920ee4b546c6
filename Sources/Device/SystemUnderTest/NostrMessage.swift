import FailClosedSupport
import Foundation

/// A Nostr event as bitchat sends it (NIP-01 fields). The model does not sign: the fake relays
/// of the harness accept any `sig`, and what matters here is where the bytes go.
public struct NostrEvent: Sendable, Equatable {
  public var id: String
  public var pubkey: String
  public var createdAt: Int
  public var kind: Int
  public var tags: [[String]]
  public var content: String
  public var sig: String

  public init(
    id: String, pubkey: String = String(repeating: "0", count: 64), createdAt: Int = 0,
    kind: Int = 1, tags: [[String]] = [], content: String, sig: String = ""
  ) {
    self.id = id
    self.pubkey = pubkey
    self.createdAt = createdAt
    self.kind = kind
    self.tags = tags
    self.content = content
    self.sig = sig.isEmpty ? String(repeating: "0", count: 128) : sig
  }

  var jsonObject: [String: Any] {
    [
      "id": id, "pubkey": pubkey, "created_at": createdAt, "kind": kind, "tags": tags,
      "content": content, "sig": sig,
    ]
  }

  init?(jsonObject: [String: Any]) {
    guard let id = jsonObject["id"] as? String, let content = jsonObject["content"] as? String
    else { return nil }
    self.init(
      id: id, pubkey: jsonObject["pubkey"] as? String ?? "",
      createdAt: jsonObject["created_at"] as? Int ?? 0, kind: jsonObject["kind"] as? Int ?? 1,
      tags: jsonObject["tags"] as? [[String]] ?? [], content: content,
      sig: jsonObject["sig"] as? String ?? "")
  }
}

/// Client-to-relay messages (NIP-01), encoded with sorted keys as bitchat's encoder does.
public enum NostrRequest: Sendable, Equatable {
  case event(NostrEvent)
  /// REQ with one filter given as a JSON object text, e.g. {"kinds":[1059]}.
  case subscribe(id: String, filterJSON: String)
  case close(id: String)

  public var text: String {
    switch self {
    case .event(let event):
      return "[\"EVENT\"," + Self.json(event.jsonObject) + "]"
    case .subscribe(let id, let filterJSON):
      return "[\"REQ\",\(JSONText.quote(id)),\(filterJSON)]"
    case .close(let id):
      return "[\"CLOSE\",\(JSONText.quote(id))]"
    }
  }

  static func json(_ object: Any) -> String {
    let data =
      (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    return String(decoding: data, as: UTF8.self)
  }

  /// Parses a client message (what a fake relay receives).
  public init?(text: String) {
    guard let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any],
      let type = array.first as? String, array.count >= 2
    else { return nil }
    switch type {
    case "EVENT":
      guard let object = array[1] as? [String: Any], let event = NostrEvent(jsonObject: object)
      else { return nil }
      self = .event(event)
    case "REQ":
      guard let id = array[1] as? String else { return nil }
      self = .subscribe(id: id, filterJSON: array.count > 2 ? Self.json(array[2]) : "{}")
    case "CLOSE":
      guard let id = array[1] as? String else { return nil }
      self = .close(id: id)
    default:
      return nil
    }
  }
}

/// Relay-to-client messages bitchat handles: EVENT, EOSE, OK, NOTICE.
public enum NostrInbound: Sendable, Equatable {
  case event(subscriptionID: String, event: NostrEvent)
  case eose(subscriptionID: String)
  case ok(eventID: String, accepted: Bool, reason: String)
  case notice(String)

  public init?(text: String) {
    guard let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any],
      array.count >= 2, let type = array[0] as? String
    else { return nil }
    switch type {
    case "EVENT":
      guard array.count >= 3, let sub = array[1] as? String,
        let object = array[2] as? [String: Any], let event = NostrEvent(jsonObject: object)
      else { return nil }
      self = .event(subscriptionID: sub, event: event)
    case "EOSE":
      guard let sub = array[1] as? String else { return nil }
      self = .eose(subscriptionID: sub)
    case "OK":
      guard array.count >= 3, let id = array[1] as? String,
        let accepted = (array[2] as? NSNumber)?.boolValue
      else { return nil }
      let reason = array.count >= 4 ? (array[3] as? String ?? "no reason given") : "no reason given"
      self = .ok(eventID: id, accepted: accepted, reason: reason)
    case "NOTICE":
      guard let message = array[1] as? String else { return nil }
      self = .notice(message)
    default:
      return nil
    }
  }

  public var text: String {
    switch self {
    case .event(let sub, let event):
      return "[\"EVENT\",\(JSONText.quote(sub)),\(NostrRequest.json(event.jsonObject))]"
    case .eose(let sub): return "[\"EOSE\",\(JSONText.quote(sub))]"
    case .ok(let id, let accepted, let reason):
      return "[\"OK\",\(JSONText.quote(id)),\(accepted),\(JSONText.quote(reason))]"
    case .notice(let message): return "[\"NOTICE\",\(JSONText.quote(message))]"
    }
  }
}

import Foundation

/// The fields of a v3 authority key certificate (tor-gencert's `authority_certificate`,
/// dir-spec 3.1) that decide whether a cached one may be used again. Pure: text in.
public struct AuthorityCertificate: Sendable, Equatable {
  /// The v3 identity: the SHA-1 of the identity key, upper-case hex.
  public let fingerprint: String
  /// "address:port", as tor-gencert's `-a` wrote it.
  public let address: String
  /// When the signing key stops being valid (UTC).
  public let expires: Date
  /// The base64 body of the `dir-identity-key` block: the identity key whose SHA-1 (of its DER
  /// form) is ``fingerprint``.
  public let identityKey: String
  /// The base64 body of the `dir-signing-key` block: the public half of
  /// `authority_signing_key`.
  public let signingKey: String

  /// Why a text is not a certificate this network can use.
  public struct Malformed: Error, Equatable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
  }

  public init(text: String) throws(Malformed) {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard lines.first == "dir-key-certificate-version 3" else {
      throw Malformed(message: "the first line is not 'dir-key-certificate-version 3'")
    }
    func value(_ keyword: String) throws(Malformed) -> String {
      guard let line = lines.first(where: { $0.hasPrefix(keyword + " ") }) else {
        throw Malformed(message: "no '\(keyword)' line")
      }
      return String(line.dropFirst(keyword.count + 1))
    }
    let fingerprint = try value("fingerprint")
    guard fingerprint.count == 40, fingerprint.allSatisfy(\.isHexDigit) else {
      throw Malformed(message: "'fingerprint \(fingerprint)' is not 40 hex digits")
    }
    self.fingerprint = fingerprint.uppercased()
    address = try value("dir-address")
    let expiresText = try value("dir-key-expires")
    guard let expires = Self.parseTime(expiresText) else {
      throw Malformed(message: "'dir-key-expires \(expiresText)' is not a UTC time")
    }
    self.expires = expires
    identityKey = try Self.publicKeyBlock("dir-identity-key", in: lines)
    signingKey = try Self.publicKeyBlock("dir-signing-key", in: lines)
  }

  /// The base64 body of the RSA PUBLIC KEY block after `keyword`'s line.
  static func publicKeyBlock(_ keyword: String, in lines: [String]) throws(Malformed) -> String {
    guard let start = lines.firstIndex(of: keyword), start + 1 < lines.count,
      lines[start + 1] == "-----BEGIN RSA PUBLIC KEY-----",
      let end = lines[(start + 1)...].firstIndex(of: "-----END RSA PUBLIC KEY-----")
    else { throw Malformed(message: "no '\(keyword)' RSA PUBLIC KEY block") }
    let body = lines[(start + 2)..<end].joined()
    guard !body.isEmpty, Data(base64Encoded: body) != nil else {
      throw Malformed(message: "the '\(keyword)' block is not base64")
    }
    return body
  }

  /// dir-spec's time format: "YYYY-MM-DD HH:MM:SS", UTC.
  static func parseTime(_ text: String) -> Date? {
    let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" })
    guard parts.count == 6, text.count == 19 else { return nil }
    let numbers = parts.compactMap { Int($0) }
    guard numbers.count == 6 else { return nil }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let components = DateComponents(
      year: numbers[0], month: numbers[1], day: numbers[2], hour: numbers[3],
      minute: numbers[4], second: numbers[5])
    guard components.isValidDate(in: calendar) else { return nil }
    return calendar.date(from: components)
  }
}

import Foundation

/// GeoRelayDirectory's CSV rules (validatedEntries): UTF-8 without BOM, at most 512 KiB and
/// 5,000 rows; header "relay url,latitude,longitude" or "relay url,lat,lon" (any case); every
/// row exactly 3 columns with a valid relay host and coordinates in range; one bad row or a
/// host listed at two different coordinates rejects the whole file; at least `minimumEntries`
/// entries and, against a baseline, at least half of it kept.
public enum GeoRelayCSV {
  public struct Entry: Hashable, Sendable {
    public let host: String
    public let lat: Double
    public let lon: Double
    public init(host: String, lat: Double, lon: Double) {
      self.host = host
      self.lat = lat
      self.lon = lon
    }
  }

  public struct Policy: Sendable {
    public var maximumBytes = 512 * 1024
    public var maximumRows = 5_000
    public var maximumEntries = 5_000
    public var minimumRemoteEntries = 50
    public var minimumRetainedFraction = 0.5
    public static let live = Policy()
  }

  /// Why a file was rejected, with the row at fault (1-based line among non-empty lines).
  public enum Rejection: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case tooLarge(bytes: Int)
    case notUTF8
    case byteOrderMark
    case tooManyRows(Int)
    case badHeader(String)
    case badRow(line: Int, reason: String)
    case conflictingDuplicate(line: Int, host: String)
    case tooManyEntries
    case tooFewEntries(Int, minimum: Int)
    case tooLittleRetained(kept: Int, required: Int)

    public var description: String {
      switch self {
      case .empty: return "empty file"
      case .tooLarge(let bytes): return "\(bytes) bytes, more than 512 KiB"
      case .notUTF8: return "not UTF-8"
      case .byteOrderMark: return "starts with a byte order mark"
      case .tooManyRows(let rows): return "\(rows) rows, more than 5000"
      case .badHeader(let header): return "header '\(header)' is not 'relay url,latitude,longitude'"
      case .badRow(let line, let reason): return "line \(line): \(reason)"
      case .conflictingDuplicate(let line, let host):
        return "line \(line): \(host) listed again at other coordinates"
      case .tooManyEntries: return "more than 5000 entries"
      case .tooFewEntries(let count, let minimum): return "\(count) entries, fewer than \(minimum)"
      case .tooLittleRetained(let kept, let required):
        return "keeps \(kept) of the current entries, fewer than \(required)"
      }
    }
  }

  public static func validatedEntries(
    from data: Data, policy: Policy = .live, minimumEntries: Int,
    baseline: Set<Entry>? = nil
  ) -> Result<[Entry], Rejection> {
    guard !data.isEmpty else { return .failure(.empty) }
    guard data.count <= policy.maximumBytes else { return .failure(.tooLarge(bytes: data.count)) }
    // Checked on the bytes: Foundation's UTF-8 decoding on Linux drops a leading BOM.
    guard !data.starts(with: [0xEF, 0xBB, 0xBF]) else { return .failure(.byteOrderMark) }
    guard let text = String(data: data, encoding: .utf8) else { return .failure(.notUTF8) }
    let lines = text.split(whereSeparator: { $0.isNewline })
      .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
      .filter { !$0.isEmpty }
    guard let header = lines.first else { return .failure(.empty) }
    guard lines.count - 1 <= policy.maximumRows else {
      return .failure(.tooManyRows(lines.count - 1))
    }
    let headerParts = header.split(separator: ",", omittingEmptySubsequences: false)
      .map { $0.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }
    guard
      headerParts == ["relay url", "latitude", "longitude"]
        || headerParts == ["relay url", "lat", "lon"]
    else { return .failure(.badHeader(header)) }

    var byHost: [String: Entry] = [:]
    for (offset, line) in lines.dropFirst().enumerated() {
      let lineNumber = offset + 2
      let parts = line.split(separator: ",", omittingEmptySubsequences: false)
        .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
      guard parts.count == 3 else {
        return .failure(.badRow(line: lineNumber, reason: "\(parts.count) columns, expected 3"))
      }
      guard let host = validatedDirectoryAddress(parts[0]) else {
        return .failure(.badRow(line: lineNumber, reason: "bad relay address '\(parts[0])'"))
      }
      guard let lat = Double(parts[1]), lat.isFinite, (-90.0...90.0).contains(lat) else {
        return .failure(.badRow(line: lineNumber, reason: "bad latitude '\(parts[1])'"))
      }
      guard let lon = Double(parts[2]), lon.isFinite, (-180.0...180.0).contains(lon) else {
        return .failure(.badRow(line: lineNumber, reason: "bad longitude '\(parts[2])'"))
      }
      let entry = Entry(host: host, lat: lat, lon: lon)
      if let existing = byHost[host], existing != entry {
        return .failure(.conflictingDuplicate(line: lineNumber, host: host))
      }
      byHost[host] = entry
      guard byHost.count <= policy.maximumEntries else { return .failure(.tooManyEntries) }
    }
    let parsed = Set(byHost.values)
    guard parsed.count >= minimumEntries else {
      return .failure(.tooFewEntries(parsed.count, minimum: minimumEntries))
    }
    if let baseline {
      let required = Int((Double(baseline.count) * policy.minimumRetainedFraction).rounded(.up))
      let kept = parsed.intersection(baseline).count
      guard kept >= required else {
        return .failure(.tooLittleRetained(kept: kept, required: required))
      }
    }
    return .success(parsed.sorted { ($0.host, $0.lat, $0.lon) < ($1.host, $1.lat, $1.lon) })
  }

  /// A directory row's relay address: wss/https only, no user, query, fragment or path, an
  /// ASCII DNS name of at least two labels that is not all-numeric, not localhost, .local or
  /// .internal; ":443" dropped, another port kept.
  public static func validatedDirectoryAddress(_ rawValue: String) -> String? {
    let trimmed = rawValue.trimmingCharacters(in: .whitespacesAndNewlines)
    let printableASCII = trimmed.unicodeScalars.allSatisfy {
      $0.isASCII && !CharacterSet.controlCharacters.contains($0)
    }
    guard printableASCII && !trimmed.isEmpty else { return nil }
    // A bare host reads as a wss:// URL.
    let url = trimmed.contains("://") ? trimmed : "wss://" + trimmed
    guard let components = URLComponents(string: url),
      let scheme = components.scheme?.lowercased(),
      scheme == "wss" || scheme == "https",
      components.user == nil, components.password == nil,
      components.query == nil, components.fragment == nil,
      components.path.isEmpty || components.path == "/",
      let rawHost = components.host
    else { return nil }
    let host = rawHost.lowercased()
    guard !host.isEmpty, host.count <= 253, host.unicodeScalars.allSatisfy({ $0.isASCII }),
      !host.hasSuffix("."), host != "localhost", !host.hasSuffix(".localhost"),
      !host.hasSuffix(".local"), !host.hasSuffix(".internal")
    else { return nil }
    let labels = host.split(separator: ".", omittingEmptySubsequences: false)
    let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-")
    guard labels.count >= 2,
      !labels.allSatisfy({ $0.allSatisfy(\.isNumber) }),
      labels.allSatisfy({ label in
        (1...63).contains(label.count) && label.first != "-" && label.last != "-"
          && label.allSatisfy { allowed.contains($0) }
      })
    else { return nil }
    if let port = components.port {
      guard (1...65_535).contains(port) else { return nil }
      if port != 443 { return "\(host):\(port)" }
    }
    return host
  }
}

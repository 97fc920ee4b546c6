/// Whether a torrc keeps tor off the public Tor network: pinned either to private directory
/// authorities (`DirAuthority` lines, every one on loopback or the harness's 10.0.0.0/8
/// namespaces) or to bridges (`UseBridges 1`, every `Bridge` on loopback or 10.0.0.0/8), with
/// nothing that points elsewhere (a public FallbackDir, an %include we cannot see). Pure.
public enum TorrcPinning {
  /// What is wrong with `torrc` (empty when it is pinned).
  public static func problems(_ torrc: String) -> [String] {
    var problems: [String] = []
    var authorities = 0
    var bridges = 0
    var useBridges = false
    for raw in torrc.split(separator: "\n") {
      let line = raw.trimmingCharacters(in: .whitespaces)
      guard !line.isEmpty, !line.hasPrefix("#") else { continue }
      let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
      let option = fields[0].lowercased()
      switch option {
      case "%include":
        problems.append("\(line): an included file cannot be checked")
      case "dirauthority", "alternatedirauthority", "fallbackdir", "bridge":
        // The address is the first IP:PORT field (a bridge line may start with a transport).
        guard let address = fields.dropFirst().first(where: { isAddress($0) }) else {
          problems.append("\(line): no IP:PORT")
          continue
        }
        if !isHarnessAddress(address) {
          problems.append("\(line): \(address) is neither loopback nor the harness's 10.0.0.0/8")
        }
        if option == "bridge" { bridges += 1 } else if option != "fallbackdir" { authorities += 1 }
      case "usebridges":
        useBridges = fields.dropFirst().first == "1"
      case "usedefaultfallbackdirs":
        if fields.dropFirst().first != "0" {
          problems.append("\(line): tor's built-in public fallback directories")
        }
      default:
        continue
      }
    }
    if authorities == 0 && !(useBridges && bridges > 0) {
      problems.append(
        "neither private DirAuthority lines nor UseBridges 1 with a Bridge: tor would use the "
          + "public Tor network")
    }
    if useBridges && bridges == 0 { problems.append("UseBridges 1 without a Bridge line") }
    return problems
  }

  static func isAddress(_ field: String) -> Bool {
    guard !field.contains("="), let colon = field.lastIndex(of: ":") else { return false }
    let host = field[..<colon]
    return UInt16(field[field.index(after: colon)...]) != nil
      && host.split(separator: ".").count == 4
      && host.split(separator: ".").allSatisfy { UInt8($0) != nil }
  }

  /// 127.0.0.0/8 or 10.0.0.0/8 (the namespaces' plan).
  static func isHarnessAddress(_ field: String) -> Bool {
    field.hasPrefix("127.") || field.hasPrefix("10.")
  }
}

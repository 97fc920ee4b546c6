/// Control commands the harness's controllers refuse to send, because they could let a pinned
/// tor reach the public Tor network: `SETCONF DisableNetwork` with no value (it resets to 0),
/// any change to where tor finds the network (DirAuthority, Bridge, UseBridges, FallbackDir,
/// ClientTransportPlugin...), RESETCONF of those, and LOADCONF (a whole new torrc). Pure.
public enum ControlCommandGuard {
  /// Options that pin tor to the private network or the loopback bridge.
  public static let pinningOptions: Set<String> = [
    "dirauthority", "alternatedirauthority", "alternatebridgeauthority", "fallbackdir",
    "usebridges", "bridge", "clienttransportplugin", "usedefaultfallbackdirs", "reachableaddresses",
    "proxy", "httpsproxy", "socks4proxy", "socks5proxy",
  ]

  /// Why `line` must not be sent, or nil when it is safe.
  public static func refusal(for line: String) -> String? {
    let trimmed = ControlArguments.trim(Substring(line))
    let parts = ControlArguments.split(trimmed, limit: 2)
    guard let keyword = parts.first?.uppercased() else { return nil }
    let arguments = parts.count > 1 ? parts[1] : ""
    switch keyword {
    case "+LOADCONF", "LOADCONF":
      return "\(keyword) would replace the whole configuration, pins included"
    case "SETCONF", "RESETCONF":
      guard
        let entries = ControlArguments.keyValues(arguments, omitKeys: false, omitValues: true)
      else { return "\(keyword) with arguments that cannot be parsed: \(arguments)" }
      for entry in entries {
        let key = entry.key.lowercased()
        if pinningOptions.contains(key) {
          return "\(keyword) \(entry.key) would change how tor finds the network"
        }
        if key == "disablenetwork" {
          guard keyword == "SETCONF", let value = entry.value, value == "0" || value == "1"
          else {
            return "\(keyword) \(entry.key) without the value 0 or 1 resets it to 0 "
              + "(give the value)"
          }
        }
      }
      return nil
    default:
      return nil
    }
  }
}

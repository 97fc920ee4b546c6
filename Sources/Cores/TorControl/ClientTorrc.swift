/// The torrc options of a tor client the harness starts (the app's tor, `exec --tor real`, a
/// testnet client), whatever network it joins: next to ``BridgeLine`` because its bridges are
/// what these lines carry. Pure: text out.
public enum ClientTorrc {
  /// The options a client owns, whatever network it joins: where it keeps state and logs, its
  /// SOCKS and control ports on loopback, and its bridges (UseBridges 1 and a transport plugin
  /// for each transport used).
  public static func options(
    dataDirectory: String, logDirectory: String, socksPort: UInt16, controlPort: UInt16,
    bridges: [BridgeLine], disableNetwork: Bool, owningControllerPID: Int32? = nil
  ) -> [String] {
    var lines = [
      "DataDirectory \(dataDirectory)",
      "SocksPort 127.0.0.1:\(socksPort)",
      "ControlPort 127.0.0.1:\(controlPort)",
      "CookieAuthentication 1",
      "Log notice file \(logDirectory)/notice.log",
      // Bootstrap problems are logged at info level until their count makes them warnings;
      // the control domain alone is small, and shows a censor's first bite.
      "Log [control]info file \(logDirectory)/bootstrap-problems.log",
      "ClientUseIPv6 0",
    ]
    // tor exits by itself when its controller dies, whatever kills the controller.
    if let owningControllerPID { lines.append("__OwningControllerProcess \(owningControllerPID)") }
    if disableNetwork { lines.append("DisableNetwork 1") }
    if !bridges.isEmpty {
      lines.append("UseBridges 1")
      let transports = Set(bridges.compactMap(\.transport))
      for transport in transports.sorted() where transport == "obfs4" {
        lines.append("ClientTransportPlugin obfs4 exec /usr/bin/obfs4proxy")
      }
      lines += bridges.map { "Bridge \($0.text)" }
    }
    return lines
  }

  /// An app's torrc: the network's settings from `base` (a file the harness wrote, e.g.
  /// TorrcBuilder.clientBase in Testnet), then the app's own options. The network starts disabled; the app's
  /// controller enables it. No default fallback directories: only the base's authorities.
  public static func app(
    base: String, dataDirectory: String, logDirectory: String, socksPort: UInt16,
    controlPort: UInt16, owningControllerPID: Int32, bridges: [BridgeLine]
  ) -> String {
    var text = base
    if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
    let own = options(
      dataDirectory: dataDirectory, logDirectory: logDirectory, socksPort: socksPort,
      controlPort: controlPort, bridges: bridges, disableNetwork: true,
      owningControllerPID: owningControllerPID)
    return text + "# failclosed app: the client's own options\n"
      + (own + ["UseDefaultFallbackDirs 0"]).joined(separator: "\n") + "\n"
  }
}

import Foundation
import FoundationNetworkingShim
import IPtProxyUI
import TLS
import Tor

// onion-browser-source-driver --actions FILE [--state-dir DIR] [--ca FILE]
//                             [--control HOST:PORT] [--tor-base TORRC] [--tor-binary PATH]
// Onion Browser's own Tor layer (OnionManager.swift for 2.X, TorManager.swift for 3.X) driven
// by the scenario's actions the way the app's delegates call it (OnionBrowserHarness).
// --control: the running tor's control port (the mock's ctor personality, default
// 127.0.0.1:39051); --tor-base: TorThread runs Debian's tor pinned by that base instead (the
// real-Tor lane), its logs in <state-dir>/tor. Everything the app keeps on disk (its Caches,
// where OnionManager/TorManager put tor's data directory; UserDefaults) is under the state
// directory.

func usage(_ message: String) -> Never {
  FileHandle.standardError.write(Data(("onion-browser-source-driver: " + message + "\n").utf8))
  exit(2)
}

var options: [String: String] = [:]
var commandLine = Array(CommandLine.arguments.dropFirst())
while !commandLine.isEmpty {
  let name = commandLine.removeFirst()
  guard name.hasPrefix("--"), !commandLine.isEmpty else { usage("bad argument '\(name)'") }
  options[String(name.dropFirst(2))] = commandLine.removeFirst()
}
guard let actionsFile = options["actions"] else { usage("--actions FILE is required") }
let stateDirectory =
  options["state-dir"] ?? NSTemporaryDirectory() + "onion-browser-source-\(getpid())"
// FileManager's .cachesDirectory (FileManager+Helpers.swift's cacheDir) is XDG_CACHE_HOME.
setenv("XDG_CACHE_HOME", stateDirectory + "/Library/Caches", 1)
setenv("XDG_DATA_HOME", stateDirectory + "/data", 1)
setenv("XDG_CONFIG_HOME", stateDirectory + "/config", 1)
try? FileManager.default.createDirectory(
  atPath: stateDirectory + "/Library/Caches", withIntermediateDirectories: true)
// The app's prints (OnionManager/TorManager log with print) go to a file; stdout is events.
EventStream.shared.takeStandardOutput(logPath: stateDirectory + "/app.log")

if let base = options["tor-base"] {
  TorLinux.backend = .debianTor(
    baseTorrc: base, logDirectory: stateDirectory + "/tor",
    binary: options["tor-binary"] ?? "/usr/bin/tor")
} else {
  let control = options["control"] ?? "127.0.0.1:39051"
  let parts = control.split(separator: ":")
  guard parts.count == 2, let port = UInt16(parts[1]) else {
    usage("--control must be HOST:PORT, got '\(control)'")
  }
  TorLinux.backend = .external(host: String(parts[0]), port: port)
}
TorLinux.setReporter { type, fields in EventStream.shared.record(type, fields) }
BitchatNetworkEvents.record = { type, fields in EventStream.shared.record(type, fields) }
IPtProxyUI.Settings.stateLocation = URL(fileURLWithPath: stateDirectory + "/pt")
if let ca = options["ca"] {
  guard let pem = try? String(contentsOfFile: ca, encoding: .utf8) else {
    usage("--ca \(ca): unreadable")
  }
  AppleTransportSettings.trust = .pem(pem)
}

// The scenario's preferences: its bridges (the real lane's `tor.bridges`) become the user's
// custom bridges, as Onion Browser's bridge settings store them.
let defaults = UserDefaults.standard
for key in defaults.dictionaryRepresentation().keys { defaults.removeObject(forKey: key) }
if let data = FileManager.default.contents(atPath: stateDirectory + "/preferences.json"),
  let preferences = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
  let bridges = preferences["tor.bridges"] as? [String], !bridges.isEmpty
{
  Settings.transport = .custom
  Settings.customBridges = bridges
}

let actions: [HarnessAction]
do {
  actions = try HarnessAction.parse(
    try String(contentsOfFile: actionsFile, encoding: .utf8), file: actionsFile)
} catch {
  usage("\(error)")
}

EventStream.shared.record(
  "state", ["component": "app", "field": "profile", "value": harnessVersion])
let harness = OnionBrowserHarness()
let runner = Foundation.Thread {
  for action in actions {
    if let at = action.at {
      let wait = at - EventStream.shared.now
      if wait > 0 { Foundation.Thread.sleep(forTimeInterval: wait) }
    }
    DispatchQueue.main.sync { harness.perform(action) }
    if action.name == "wait", let seconds = action.seconds, seconds > 0 {
      Foundation.Thread.sleep(forTimeInterval: seconds)
    }
  }
  DispatchQueue.main.sync { harness.terminate() }
  // The app's last commands (3.X: SIGNAL SHUTDOWN) reach tor before the process ends.
  Foundation.Thread.sleep(forTimeInterval: 0.3)
  exit(0)
}
runner.start()
dispatchMain()

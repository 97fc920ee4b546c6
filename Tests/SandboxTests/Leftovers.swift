import Foundation

@testable import Sandbox

/// What a run may have left behind, read from the system the way an operator would.
enum Leftovers {
  static func of(_ names: SandboxNames) -> [String] {
    var found: [String] = []
    let namespaces = (try? CommandRunner.run(["ip", "netns", "list"]).stdout) ?? ""
    for line in namespaces.split(separator: "\n") where line.hasPrefix(names.prefix) {
      found.append("namespace " + line)
    }
    let links = (try? CommandRunner.run(["ip", "-o", "link"]).stdout) ?? ""
    for line in links.split(separator: "\n") where line.contains(names.prefix) {
      found.append("link " + line)
    }
    let tables = (try? CommandRunner.run(["nft", "list", "tables"]).stdout) ?? ""
    for line in tables.split(separator: "\n") where line.contains(names.nftTable) {
      found.append(String(line))
    }
    if FileManager.default.fileExists(atPath: names.resolvConfDirectory) {
      found.append(names.resolvConfDirectory)
    }
    if FileManager.default.fileExists(atPath: names.pidFile) { found.append(names.pidFile) }
    return found
  }
}

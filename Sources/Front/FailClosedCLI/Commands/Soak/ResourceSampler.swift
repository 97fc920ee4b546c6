import FailClosedSupport
import Foundation
import Sandbox

/// Counts what the soak watches (``SoakCount``) and reads this process's resident memory:
/// blocking (it lists directories and runs `nft`), so it runs off the cooperative pool.
struct ResourceSampler: Sendable {
  /// One reading.
  struct Reading: Sendable {
    var counts: ResourceCounts
    var rssKiB: Int
    var threads: Int
    /// The open descriptors by kind (``ProcText/descriptorKind(link:)``): what a descriptor
    /// count that moved is made of.
    var descriptorKinds: [String: Int] = [:]
    /// A directory walk that stopped at ``entryCap``: its count is a floor.
    var capped: [SoakCount] = []
  }

  /// The harness's temporary directory (TMPDIR, else /tmp).
  var temporaryDirectory: String
  /// The user's cache directory (``UserCacheDirectory``).
  var cacheDirectory: String
  /// At most this many entries are counted under one directory (a bound on a sample's cost).
  var entryCap = 50_000

  static func standard() -> ResourceSampler {
    var temporary = NSTemporaryDirectory()
    while temporary.count > 1 && temporary.hasSuffix("/") { temporary.removeLast() }
    return ResourceSampler(
      temporaryDirectory: temporary, cacheDirectory: UserCacheDirectory.root())
  }

  func read() -> Reading {
    let before = SoakOwnership.read()
    // nft first: its process is reaped before the children are counted.
    let tables =
      (try? CommandRunner.capture(["nft", "list", "tables"])).map {
        ProcText.nftTables(listing: $0.stdout)
      } ?? []
    let namespaces = Self.names(in: SoakOwnership.namespaceDirectory)
    let links = Self.names(in: "/sys/class/net")
    let pidFiles = Self.names(in: SandboxNames.runDirectory)
    let mountinfo = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
    let ownership = before.merged(with: SoakOwnership.read())
    var counts = ResourceCounts()
    counts[.nftTables] = tables.filter { ownership.counts($0.name) }.count
    counts[.namespaces] = namespaces.filter(ownership.counts).count
    counts[.links] = links.filter(ownership.counts).count
    counts[.pidFiles] = pidFiles.filter(ownership.counts).count
    counts[.mounts] = ProcText.mountPoints(mountinfo: mountinfo).filter(ownership.countsMount).count
    var kinds: [String: Int] = [:]
    for name in Self.names(in: "/proc/self/fd") {
      let link =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name))
      kinds[ProcText.descriptorKind(link: link ?? "gone"), default: 0] += 1
    }
    counts[.descriptors] = Self.names(in: "/proc/self/fd").count
    counts[.children] = Self.descendants().count
    var capped: [SoakCount] = []
    let tmp = Self.entries(under: temporaryDirectory, cap: entryCap)
    counts[.tmpEntries] = tmp
    if tmp >= entryCap { capped.append(.tmpEntries) }
    let cache = Self.entries(under: cacheDirectory, cap: entryCap)
    counts[.cacheEntries] = cache
    if cache >= entryCap { capped.append(.cacheEntries) }
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    return Reading(
      counts: counts, rssKiB: ProcText.statusField("VmRSS", in: status) ?? 0,
      threads: ProcText.statusField("Threads", in: status) ?? 0, descriptorKinds: kinds,
      capped: capped)
  }

  static func names(in directory: String) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
  }

  /// This process's descendants, from every process's parent in /proc.
  static func descendants() -> Set<pid_t> {
    var parents: [pid_t: pid_t] = [:]
    for name in names(in: "/proc") {
      guard let pid = pid_t(name),
        let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
        let parent = ProcText.parentPID(stat: stat)
      else { continue }
      parents[pid] = parent
    }
    return ProcText.descendants(of: getpid(), parents: parents)
  }

  /// Entries under `root`, recursively, without following symbolic links; at most `cap`.
  static func entries(under root: String, cap: Int) -> Int {
    var count = 0
    var stack = [root]
    while let directory = stack.popLast(), count < cap {
      guard let handle = opendir(directory) else { continue }
      defer { closedir(handle) }
      while count < cap, let entry = readdir(handle) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) {
          String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name == "." || name == ".." { continue }
        count += 1
        let path = directory + "/" + name
        var isDirectory = entry.pointee.d_type == UInt8(DT_DIR)
        if entry.pointee.d_type == UInt8(DT_UNKNOWN) {
          var info = stat()
          isDirectory = lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        }
        if isDirectory { stack.append(path) }
      }
    }
    return min(count, cap)
  }
}

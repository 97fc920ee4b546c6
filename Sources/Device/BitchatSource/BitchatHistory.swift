import Foundation

/// bitchat's history in a git repository: the commits that touch the Tor layer since the
/// switch to Arti, and each one's sources exported to a directory of their own (what the lane
/// and bitchat's tests read; binary frameworks and images are not needed and may be absent).
public struct BitchatHistory: Sendable {
  public struct Commit: Sendable, Equatable, Codable {
    public let hash: String
    /// Committer date, ISO 8601.
    public let date: String
    public let subject: String
  }

  /// The Tor layer, as the sweep follows it: the lane's files and the Arti package.
  public static let torLayerPaths: [String] =
    ["localPackages/Arti"] + BitchatTree.expected.map(\.path)
    + BitchatTestFiles.expected.map(\.path)
  /// The switch to Arti: the commit that added this file.
  static let artiMarker = "localPackages/Arti/Sources/TorManager.swift"
  /// What an export keeps: sources, manifests, headers, the relay list.
  static let exportSuffixes = [".swift", ".h", ".c", ".modulemap", ".csv", ".rs"]

  public let repository: String

  public init(repository: String) throws(BitchatSourceError) {
    guard FileManager.default.fileExists(atPath: repository) else {
      throw .noRepository(repository, "no such directory")
    }
    self.repository = repository
    guard (try? git(["rev-parse", "--git-dir"]))?.status == 0 else {
      throw .noRepository(repository, "not a git repository")
    }
  }

  /// The commits touching the Tor layer from `since` (default: the switch to Arti) to HEAD,
  /// oldest first; with `max`, that many spread evenly over the list (first and last kept).
  public func commits(since: String?, max: Int?) throws(BitchatSourceError) -> [Commit] {
    let start: String
    if let since {
      guard let resolved = try? git(["rev-parse", "--verify", since + "^{commit}"]),
        resolved.status == 0
      else { throw .noRepository(repository, "no commit '\(since)'") }
      start = resolved.text.trimmingCharacters(in: .whitespacesAndNewlines)
    } else {
      guard
        let added = try? git(["log", "--diff-filter=A", "--format=%H", "--", Self.artiMarker]),
        let first = added.text.split(separator: "\n").last
      else { throw .noRepository(repository, "no commit adds \(Self.artiMarker)") }
      start = String(first)
    }
    let format = "--format=%H%x09%cI%x09%s"
    guard
      let range = try? git(
        ["log", "--reverse", format, start + "..HEAD", "--"] + Self.torLayerPaths),
      let first = try? git(["log", "-1", format, start]), range.status == 0
    else { throw .noRepository(repository, "git log failed") }
    let all = (first.text + range.text).split(separator: "\n").compactMap { line -> Commit? in
      let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
      guard parts.count == 3 else { return nil }
      return Commit(hash: String(parts[0]), date: String(parts[1]), subject: String(parts[2]))
    }
    guard let max, max > 0, all.count > max else { return all }
    if max == 1 { return [all[all.count - 1]] }
    return (0..<max).map {
      all[Int((Double($0) * Double(all.count - 1) / Double(max - 1)).rounded())]
    }
  }

  /// One commit, by hash or name.
  public func commit(_ name: String) throws(BitchatSourceError) -> Commit {
    guard let found = try? git(["log", "-1", "--format=%H%x09%cI%x09%s", name + "^{commit}"]),
      found.status == 0
    else { throw .noRepository(repository, "no commit '\(name)'") }
    let parts = found.text.trimmingCharacters(in: .newlines).split(
      separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count == 3 else { throw .noRepository(repository, "no commit '\(name)'") }
    return Commit(hash: String(parts[0]), date: String(parts[1]), subject: String(parts[2]))
  }

  /// The commit's sources in `directory/<hash>` (made once; kept for the next sweep).
  public func export(_ commit: Commit, under directory: String) throws -> String {
    let target = directory + "/" + commit.hash
    let stamp = target + "/.failclosed-export"
    if FileManager.default.fileExists(atPath: stamp) { return target }
    try? FileManager.default.removeItem(atPath: target)
    try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
    let archive = directory + "/\(commit.hash).tar"
    defer { try? FileManager.default.removeItem(atPath: archive) }
    // Named file by file: a blob the repository lacks (a partial clone's binary framework)
    // is never asked for.
    let listing = try git(["ls-tree", "-r", "--name-only", "-z", commit.hash])
    let paths = listing.text.split(separator: "\0").map(String.init).filter { path in
      Self.exportSuffixes.contains { path.hasSuffix($0) }
    }
    let archived = try git(["archive", "--format=tar", "-o", archive, commit.hash, "--"] + paths)
    guard listing.status == 0, archived.status == 0 else {
      throw BitchatSourceError.noRepository(
        repository, "cannot export \(commit.hash): \(archived.text.prefix(300))")
    }
    let untar = try Self.run("/bin/tar", ["-x", "-f", archive, "-C", target])
    guard untar.status == 0 else {
      throw BitchatSourceError.noRepository(
        repository, "cannot export \(commit.hash): \(untar.text.prefix(300))")
    }
    try commit.hash.write(toFile: stamp, atomically: true, encoding: .utf8)
    return target
  }

  func git(_ arguments: [String]) throws -> (status: Int32, text: String) {
    try Self.run("/usr/bin/git", ["-C", repository] + arguments)
  }

  /// Runs a short command, its output (stdout, then stderr) read whole.
  static func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, text: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    // Both pipes drained before the wait, so a long log cannot fill one and block git.
    let errorData = LockedData()
    let done = DispatchSemaphore(value: 0)
    let reader = Thread {
      errorData.set(errors.fileHandleForReading.readDataToEndOfFile())
      done.signal()
    }
    reader.start()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    done.wait()
    return (
      process.terminationStatus,
      String(decoding: data, as: UTF8.self)
        + String(decoding: errorData.value, as: UTF8.self)
    )
  }
}

/// Data one thread sets and another reads.
final class LockedData: @unchecked Sendable {
  private let lock = NSLock()
  private var data: Data?
  func set(_ value: Data) { lock.withLock { data = value } }
  var value: Data { lock.withLock { data ?? Data() } }
}

import FailClosedCLI
import FailClosedSupport
import Foundation
import Glibc
import Sandbox
import TestSupport
import Testing

/// What a run of the harness may leave on the machine, by run prefix (`fc-<6 hex>`):
/// namespaces, root-namespace links and nftables tables, /etc/netns directories, pid files.
struct HarnessLeftovers {
  static func prefixes() -> [String: [String]] {
    var found: [String: [String]] = [:]
    let namespaces = (try? CommandRunner.capture(["ip", "netns", "list"]))?.stdout ?? ""
    for line in namespaces.split(separator: "\n") {
      let name = String(line.split(separator: " ").first ?? "")
      if let prefix = SandboxNames.runPrefix(of: name) {
        found[prefix, default: []].append("netns \(name)")
      }
    }
    let links = (try? CommandRunner.capture(["ip", "-o", "link"]))?.stdout ?? ""
    for line in links.split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count > 1 else { continue }
      let name = String(fields[1].split(separator: "@").first ?? "").trimmingCharacters(
        in: CharacterSet(charactersIn: ":"))
      if let prefix = SandboxNames.runPrefix(of: name) {
        found[prefix, default: []].append("link \(name)")
      }
    }
    // Root-namespace nftables tables (the run's own tables live in its namespaces).
    let tables = (try? CommandRunner.capture(["nft", "list", "tables"]))?.stdout ?? ""
    for line in tables.split(separator: "\n") {
      let name = String(line.split(separator: " ").last ?? "")
      if let prefix = SandboxNames.runPrefix(of: name) {
        found[prefix, default: []].append("nft \(line)")
      }
    }
    for directory in (try? FileManager.default.contentsOfDirectory(atPath: "/etc/netns")) ?? [] {
      if let prefix = SandboxNames.runPrefix(of: directory) {
        found[prefix, default: []].append("/etc/netns/\(directory)")
      }
    }
    for file in (try? FileManager.default.contentsOfDirectory(atPath: SandboxNames.runDirectory))
      ?? [] where file.hasSuffix(".pid")
    {
      if let prefix = SandboxNames.runPrefix(of: String(file.dropLast(4))) {
        found[prefix, default: []].append("\(SandboxNames.runDirectory)/\(file)")
      }
    }
    return found
  }

  /// The owner recorded for `prefix`, if any.
  static func owner(_ prefix: String) -> pid_t? {
    let text = try? String(
      contentsOfFile: SandboxNames.runDirectory + "/" + prefix + ".pid", encoding: .utf8)
    return text.flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
  }

  /// What appeared since `before` and belongs to no live process (or to `pid`, now dead).
  static func left(since before: [String: [String]], by pid: pid_t) -> [String] {
    prefixes().filter { prefix, _ in
      guard before[prefix] == nil else { return false }
      guard let owner = owner(prefix) else { return true }
      return owner == pid || Glibc.kill(owner, 0) != 0
    }.flatMap(\.value).sorted()
  }

  /// Processes whose environment holds `marker` (FC_KILL_MARKER=..., inherited by every
  /// process a killed run started: the app, the mock Tor, their children).
  static func processes(inheriting marker: String) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    let needle = Array("FC_KILL_MARKER=\(marker)".utf8)
    return entries.compactMap { entry -> pid_t? in
      guard let pid = pid_t(entry), pid != getpid(),
        let data = FileManager.default.contents(atPath: "/proc/\(entry)/environ")
      else { return nil }
      let bytes = [UInt8](data)
      guard bytes.count >= needle.count else { return nil }
      for start in 0...(bytes.count - needle.count)
      where bytes[start] == needle[0] && Array(bytes[start..<start + needle.count]) == needle {
        return pid
      }
      return nil
    }
  }

  /// Waits (bounded, 5 s) until the short commands (`ip`, `nft`) a SIGKILLed run had started
  /// have ended; the device's long-lived processes are the reaper's to kill. Such a command dies
  /// with the run (``Spawner/capture(_:stdin:currentDirectory:)``), but a system call it was in
  /// (a mount) finishes first; one it had not exec'd yet never execs.
  static func waitForCommands(inheriting marker: String) {
    _ = waitUntil(timeout: 5) {
      processes(inheriting: marker).allSatisfy { pid in
        let name = arguments(pid).split(separator: " ").first.map(String.init) ?? ""
        return !["ip", "nft"].contains((name as NSString).lastPathComponent)
      }
    }
  }

  /// Each process inheriting `marker`, for a leftover's account: pid, parent, state and
  /// command line ("4242 ppid 1 S: ip netns add fc-1a2b3c-wld").
  static func accounts(inheriting marker: String) -> [String] {
    processes(inheriting: marker).map { pid in
      let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
      let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
      let state = fields.first.map(String.init) ?? "?"
      let parent = fields.dropFirst().first.map(String.init) ?? "?"
      return "\(pid) ppid \(parent) \(state): \(arguments(pid))"
    }
  }

  static func arguments(_ pid: pid_t) -> String {
    let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
    return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
  }

  /// Processes whose command line contains `marker` (the command a killed run started).
  static func processes(marked marker: String) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> pid_t? in
      guard let pid = pid_t(entry),
        let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
      else { return nil }
      let text = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
      return text.contains(marker) ? pid : nil
    }
  }
}

/// Kills `failclosed exec` with SIGINT, SIGTERM and SIGKILL at points spread over its whole
/// life, from its first milliseconds (before the handler is armed) to the command running, and
/// counts what is left: after SIGINT/SIGTERM nothing, and never a pass; after SIGKILL the next
/// run's reaper removes everything. FC_KILL_ROUNDS sets the count (CI: 12; by hand: 100).
@Suite(.serialized) struct KillTests {
  static var rounds: Int {
    Int(ProcessInfo.processInfo.environment["FC_KILL_ROUNDS"] ?? "") ?? 12
  }

  @Test(
    .needsRoot,
    .needsFailclosedBinary)
  func killsAtAnyPointLeaveNothing() throws {
    let binary = try #require(FailclosedBinary.built)
    var leftovers: [String] = []
    var outcomes: [String: Int] = [:]
    var exitMilliseconds: [Int] = []
    var generator = SystemRandomNumberGenerator()
    for round in 0..<Self.rounds {
      let signalNumber = [SIGINT, SIGTERM, SIGKILL][round % 3]
      // Half the kills land in the first 80 ms (arming, reaping, set-up), half anywhere in a
      // run's first 1.5 s (set-up, world, capture, the command).
      let delay =
        round % 2 == 0
        ? UInt32.random(in: 0...80_000, using: &generator)
        : UInt32.random(in: 0...1_500_000, using: &generator)
      let marker = "29.\(getpid())\(round)"
      let before = HarnessLeftovers.prefixes()
      // A file, not a pipe: the command in the device shares it, and a SIGKILLed harness's
      // command lives on until the reaper.
      let outputPath = NSTemporaryDirectory() + "fc-kill-\(getpid())-\(round).out"
      defer { unlink(outputPath) }
      let actions = FileActions()
      // The harness's stderr is kept for a leftover's account (what its teardown said).
      let errorPath = outputPath + ".err"
      defer { unlink(errorPath) }
      actions.open(outputPath, to: 1, flags: O_WRONLY | O_CREAT | O_TRUNC)
      actions.open(errorPath, to: 2, flags: O_WRONLY | O_CREAT | O_TRUNC)
      let started = DispatchTime.now().uptimeNanoseconds
      let environment =
        ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        + ["FC_KILL_MARKER=\(marker)"]
      let harness = [binary, "exec", "--no-tor", "--grace", "0", "--", "sleep", marker]
      let pid = try Spawner.spawn(harness, actions: actions, environment: environment)
      usleep(delay)  // the kill point is the test's input, not an ordering
      kill(pid, signalNumber)
      var raw: Int32 = 0
      while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
      let exited = DispatchTime.now().uptimeNanoseconds
      let byDefault = raw & 0x7f != 0
      let status = byDefault ? raw & 0x7f : (raw >> 8) & 0xff
      let printed = FileManager.default.contents(atPath: outputPath) ?? Data()
      // Never a pass: the run was killed long before `sleep` could end.
      #expect(
        byDefault ? status == signalNumber : status == 128 + signalNumber,
        "round \(round): status \(status)")
      #expect(!String(decoding: printed, as: UTF8.self).contains("PASS"), "round \(round)")
      exitMilliseconds.append(Int((exited - started) / 1_000_000) - Int(delay / 1000))
      outcomes[byDefault ? "died by signal \(signalNumber)" : "exit \(status)", default: 0] += 1
      if signalNumber == SIGKILL {
        // The next run comes later: an `ip` the killed run had started has died with it
        // (after the system call it was in). Then it reaps before it starts, the same call its
        // set-up makes.
        HarnessLeftovers.waitForCommands(inheriting: marker)
        Reaper.reap()
      }
      let left = HarnessLeftovers.left(since: before, by: pid)
      let running = HarnessLeftovers.accounts(inheriting: marker)
      let stray = HarnessLeftovers.processes(marked: "sleep " + marker)
      for pid in stray { kill(pid, SIGKILL) }
      if !left.isEmpty || !stray.isEmpty {
        let said = FileManager.default.contents(atPath: errorPath).map {
          String(decoding: $0, as: UTF8.self).suffix(600)
        }
        leftovers.append(
          "round \(round) (signal \(signalNumber) at \(delay / 1000) ms, "
            + "\(byDefault ? "died by signal \(status)" : "exit \(status)")): \(left) "
            + "processes \(stray); still running from it: \(running); "
            + "the harness said: \(said ?? "nothing")")
      }
    }
    Reaper.reap()
    print(
      "kill test: \(Self.rounds) kills, outcomes \(outcomes), leftovers \(leftovers.count), "
        + "ms from the signal to the exit: \(exitMilliseconds)")
    #expect(leftovers.isEmpty, "\(leftovers)")
  }

  /// The same for `leak-audit` (one mock scenario) and `replay`, whose runs start child
  /// processes (the app, the mock Tor) in the device: after SIGINT/SIGTERM nothing is left,
  /// after SIGKILL the reaper leaves nothing. FC_KILL_ROUNDS sets the count (CI: 6).
  @Test(
    .needsRoot,
    .needsFailclosedBinary)
  func killsOfLeakAuditAndReplayLeaveNothing() throws {
    let binary = try #require(FailclosedBinary.built)
    let rounds = max(1, Self.rounds / 2)
    var leftovers: [String] = []
    var outcomes: [String: Int] = [:]
    var generator = SystemRandomNumberGenerator()
    let scenario = repositoryRoot + "/Scenarios/healthy-baseline.json"
    for round in 0..<rounds {
      let signalNumber = [SIGINT, SIGTERM, SIGKILL][round % 3]
      let report = NSTemporaryDirectory() + "fc-kill-report-\(getpid())-\(round)"
      defer { try? FileManager.default.removeItem(atPath: report) }
      let arguments =
        round % 2 == 0
        ? [binary, "leak-audit", "--lane", "mock", "--report", report, scenario]
        : [binary, "replay", scenario, "--report", report]
      // Anywhere in the run's first 1.5 s (a mock scenario on the event clock takes about 0.6 s
      // of it, its set-up and teardown included; on the plain clock it took 3).
      let delay = UInt32.random(in: 0...1_500_000, using: &generator)
      let marker = "\(getpid())-\(round)-\(UInt32.random(in: 0...UInt32.max, using: &generator))"
      let before = HarnessLeftovers.prefixes()
      let actions = FileActions()
      actions.open("/dev/null", to: 1, flags: O_WRONLY)
      actions.open("/dev/null", to: 2, flags: O_WRONLY)
      let environment =
        ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        + ["FC_KILL_MARKER=\(marker)"]
      let pid = try Spawner.spawn(arguments, actions: actions, environment: environment)
      usleep(delay)  // the kill point is the test's input, not an ordering
      var raw: Int32 = 0
      // A run may have finished before its kill point (a zombie until reaped: safe to signal).
      let finishedFirst = waitpid(pid, &raw, WNOHANG) == pid
      let signalled = Date()
      if !finishedFirst {
        kill(pid, signalNumber)
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
      }
      let byDefault = raw & 0x7f != 0
      let status = byDefault ? raw & 0x7f : (raw >> 8) & 0xff
      // SIGKILL cannot be caught: a run that still exited 0 was already in its own exit when
      // the signal came (an exiting process ignores signals), between the check and the kill.
      // Nor is a run whose reports were whole before the signal: it had its verdict and was
      // exiting (a report written after the signal would be a signal lost, and still fails).
      let reportedBefore =
        ((try? FileManager.default.attributesOfItem(atPath: report + "/report.json"))?[
          .modificationDate] as? Date).map { $0 <= signalled } ?? false
      let exitedFirst =
        finishedFirst
        || (!byDefault && status == 0 && (signalNumber == SIGKILL || reportedBefore))
      outcomes[
        exitedFirst
          ? "finished before the signal"
          : byDefault ? "died by signal \(status)" : "exit \(status)",
        default: 0] += 1
      if exitedFirst {
        #expect(status == 0, "round \(round): \(arguments[1]) finished with \(status)")
      } else {
        // Never lost: the run ends with the signal, never goes on to its verdict.
        #expect(
          byDefault ? status == signalNumber : status == 128 + signalNumber,
          "round \(round): \(arguments[1]) status \(status)")
      }
      if signalNumber == SIGKILL {
        HarnessLeftovers.waitForCommands(inheriting: marker)
        Reaper.reap()
      }
      let left = HarnessLeftovers.left(since: before, by: pid)
      let running = HarnessLeftovers.accounts(inheriting: marker)
      let stray = HarnessLeftovers.processes(inheriting: marker)
      for straggler in stray { kill(straggler, SIGKILL) }
      if !left.isEmpty || !stray.isEmpty {
        leftovers.append(
          "round \(round) (\(arguments[1]), signal \(signalNumber) at \(delay / 1000) ms): "
            + "\(left) processes \(running)")
      }
    }
    Reaper.reap()
    print(
      "kill test (leak-audit, replay): \(rounds) kills, outcomes \(outcomes), "
        + "leftovers \(leftovers.count)")
    #expect(leftovers.isEmpty, "\(leftovers)")
  }
}

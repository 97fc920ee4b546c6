import FailClosedSupport
import Foundation

/// A small process beside `failclosed testnet up` that cleans up after it if it dies before
/// the network is handed over, SIGKILL included: `up` tells it each tor it starts (PID and
/// torrc) through a pipe only `up` holds, and says `done` once it is responsible again (the
/// network handed over, or stopped by `up` itself). End of file without `done` means `up` is
/// gone: the watcher stops each of those tors that is still the same one (its arguments still
/// name that torrc: by PID, never by name; SIGTERM, SIGKILL 2 s later), and removes the
/// directory and the state file. Tor's own check of its owning controller (every 15 s) is the
/// backstop if the watcher is gone too (``TorOwnership``). The watcher runs in a process group
/// of its own, so the terminal's Ctrl-C reaches only `up`, which tears down itself.
public final class TestnetUpWatcher: @unchecked Sendable {
  /// /bin/sh: $1 the directory, $2 the state file; one "PID TORRC" line per tor on stdin.
  static let script = #"""
    dir=$1
    state=$2
    tors=
    while IFS= read -r line; do
      case $line in
        done) exit 0 ;;
        *) tors="$tors$line
    " ;;
      esac
    done
    ours() { grep -qzxF -- "$2" "/proc/$1/cmdline" 2>/dev/null; }
    each() {
      printf '%s' "$tors" | while read -r pid torrc; do
        [ -n "$pid" ] && ours "$pid" "$torrc" && "$@" "$pid"
      done
    }
    each kill -TERM
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      [ -z "$(each echo)" ] && break
      sleep 0.1
    done
    each kill -KILL
    rm -rf -- "$dir"
    rm -f -- "$state"
    """#

  public let pid: pid_t
  private let lock = NSLock()
  private var pipe: FileDescriptor?

  /// Starts the watcher for the network in `directory`, its state in `statePath`.
  public init(directory: String, statePath: String) throws {
    let channel = try FileDescriptor.pipe()
    let actions = FileActions()
    actions.dup(channel.read, to: 0)
    actions.open("/dev/null", to: 1, flags: O_WRONLY)
    actions.open("/dev/null", to: 2, flags: O_WRONLY)
    do {
      pid = try Spawner.spawn(
        ["/bin/sh", "-c", Self.script, "failclosed-testnet-watch", directory, statePath],
        actions: actions, newProcessGroup: true)
    } catch {
      channel.read.close()
      channel.write.close()
      throw error
    }
    channel.read.close()
    pipe = channel.write
  }

  /// A tor `up` has started (call before starting the next, while `up` holds the tor).
  public func started(pid: pid_t, torrc: String) {
    send("\(pid) \(torrc)\n")
  }

  /// `up` is responsible again (the network handed over or stopped): the watcher exits and
  /// touches nothing. Waits for it (it exits at once).
  public func done() {
    send("done\n")
    let channel = lock.withLock {
      defer { pipe = nil }
      return pipe
    }
    guard let channel else { return }
    channel.close()
    _ = Spawner.wait(pid)
  }

  private func send(_ line: String) {
    lock.withLock { try? pipe?.write(Array(line.utf8)) }
  }
}

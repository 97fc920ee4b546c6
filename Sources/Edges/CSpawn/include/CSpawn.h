#ifndef FAILCLOSED_CSPAWN_H
#define FAILCLOSED_CSPAWN_H

#include <stddef.h>
#include <sys/types.h>

/// What the child does to its descriptors and directory before it execs, in order.
typedef enum {
  /// open(path, flags, 0644), made descriptor `target`.
  FC_SPAWN_OPEN = 0,
  /// dup2(fd, target); when fd == target, its close-on-exec flag is cleared.
  FC_SPAWN_DUP2 = 1,
  /// chdir(path).
  FC_SPAWN_CHDIR = 2,
} fc_spawn_action_kind;

typedef struct {
  fc_spawn_action_kind kind;
  int fd;
  int target;
  int flags;
  const char *path;
} fc_spawn_action;

/// posix_spawn with two things glibc's cannot do in the child:
///
/// - the child execs only while `parent` is still its parent (getppid(), checked just before
///   execve): a child whose harness died between the fork and the exec never starts its
///   program (it would otherwise run it later, unowned, after a reaper had looked);
/// - with `death_signal` non-zero, the child gets that signal when the calling *thread* ends
///   (PR_SET_PDEATHSIG, set before the check, so no moment is left uncovered). For a child
///   the calling thread waits for, that is when the process dies, however it dies.
///
/// The child starts with every signal at its default action and an empty signal mask, in a
/// process group of its own when `new_process_group` is non-zero. Like glibc's posix_spawn
/// it is a vfork (CLONE_VM | CLONE_VFORK): the calling thread waits until the child has
/// exec'd or failed, and a failure before the exec is returned as the errno it met (the
/// child is then reaped). Returns 0 and the child's pid in *pid, or an errno value.
int fc_spawn(
  pid_t *pid, const char *path, char *const argv[], char *const envp[],
  const fc_spawn_action *actions, size_t action_count, int new_process_group, int death_signal,
  pid_t parent);

#endif

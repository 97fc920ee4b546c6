#define _GNU_SOURCE
#include "CSpawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

// The child runs on the parent's memory until execve: a sanitizer's instrumentation or its
// interceptors (sigaction, open, close) would update the parent's sanitizer state from it.
// So the child is not instrumented and makes only system calls through syscall(2), as
// glibc's own posix_spawn child does through its internal calls. (Their errno lands in the
// calling thread's, which is suspended until the exec and restores it.)
#if defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
#define FC_CHILD_CODE __attribute__((disable_sanitizer_instrumentation, noinline))
#endif
#endif
#ifndef FC_CHILD_CODE
#define FC_CHILD_CODE __attribute__((noinline))
#endif

/// Shared with the child (CLONE_VM): what it is to do, and the errno of a failure before the
/// exec, read by the parent once the vfork has returned.
typedef struct {
  const char *path;
  char *const *argv;
  char *const *envp;
  const fc_spawn_action *actions;
  size_t action_count;
  int new_process_group;
  int death_signal;
  pid_t parent;
  volatile int error;
  /// Under ThreadSanitizer the child is a fork, not a vfork sharing the parent's memory (its
  /// runtime cannot follow a CLONE_VM child): its error comes back through this pipe (-1: the
  /// vfork, where `error` is shared).
  int error_pipe;
} fc_spawn_request;

/// The kernel's struct sigaction (x86-64 and arm64 alike: both have sa_restorer) and its
/// 64-signal set, for rt_sigaction and rt_sigprocmask called directly. Only the handler is
/// read, and everything after it written as zeros, so an architecture without sa_restorer
/// reads the same.
typedef struct {
  void *handler;
  unsigned long flags;
  void *restorer;
  unsigned long mask;
} fc_kernel_sigaction;

#define FC_SIGNALS 64
#define FC_SIGSET_BYTES sizeof(unsigned long)

FC_CHILD_CODE static void fail(fc_spawn_request *request, int error) {
  request->error = error;
  if (request->error_pipe >= 0) syscall(SYS_write, request->error_pipe, &error, sizeof error);
  syscall(SYS_exit_group, 127);
}

/// The child, on a stack of its own, sharing the parent's memory until execve. It starts with
/// every signal blocked (the parent blocked them around clone), so no handler of the parent's
/// runs here before the dispositions are reset.
FC_CHILD_CODE static int child(void *argument) {
  fc_spawn_request *request = argument;
  // Every handled or ignored signal back to its default (a handler would run on the
  // parent's memory; an ignored SIGPIPE or SIGINT would be inherited through execve).
  for (long signal_number = 1; signal_number <= FC_SIGNALS; signal_number++) {
    if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
    fc_kernel_sigaction current = {0, 0, 0, 0};
    if (syscall(SYS_rt_sigaction, signal_number, NULL, &current, FC_SIGSET_BYTES) != 0) {
      continue;
    }
    if (current.handler == (void *)SIG_DFL) continue;
    fc_kernel_sigaction reset = {(void *)SIG_DFL, 0, 0, 0};
    syscall(SYS_rt_sigaction, signal_number, &reset, NULL, FC_SIGSET_BYTES);
  }
  if (request->new_process_group && syscall(SYS_setpgid, 0, 0) != 0) fail(request, errno);
  // Set before the parent is checked: a parent that dies after this signals the child; one
  // that died before it has already re-parented the child, which the check below sees.
  unsigned long death_signal = (unsigned long)request->death_signal;
  if (death_signal != 0 && syscall(SYS_prctl, PR_SET_PDEATHSIG, death_signal, 0UL, 0UL, 0UL) != 0) {
    fail(request, errno);
  }
  for (size_t index = 0; index < request->action_count; index++) {
    const fc_spawn_action *action = &request->actions[index];
    switch (action->kind) {
    case FC_SPAWN_OPEN: {
      long fd = syscall(SYS_openat, AT_FDCWD, action->path, action->flags, 0644);
      if (fd < 0) fail(request, errno);
      if (fd != action->target) {
        if (syscall(SYS_dup3, fd, action->target, 0) < 0) fail(request, errno);
        syscall(SYS_close, fd);
      }
      break;
    }
    case FC_SPAWN_DUP2:
      if (action->fd == action->target) {
        long flags = syscall(SYS_fcntl, action->fd, F_GETFD);
        if (flags < 0 || syscall(SYS_fcntl, action->fd, F_SETFD, flags & ~FD_CLOEXEC) < 0) {
          fail(request, errno);
        }
      } else if (syscall(SYS_dup3, action->fd, action->target, 0) < 0) {
        fail(request, errno);
      }
      break;
    case FC_SPAWN_CHDIR:
      if (syscall(SYS_chdir, action->path) != 0) fail(request, errno);
      break;
    }
  }
  unsigned long empty = 0;
  if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, NULL, FC_SIGSET_BYTES) != 0) {
    fail(request, errno);
  }
  // Still the parent's child? A harness that died since the fork (SIGKILL) has re-parented
  // this child; its program must not start. Unlike glibc's, an orphan never execs.
  if (syscall(SYS_getppid) != request->parent) fail(request, ESRCH);
  syscall(SYS_execve, request->path, request->argv, request->envp);
  fail(request, errno);
  return 127;
}

/// The child by fork (ThreadSanitizer's builds): the same child code on a copy of the
/// parent's memory; a failure before the exec writes its errno to a close-on-exec pipe, whose
/// end of file tells the parent the exec happened.
static int fc_spawn_by_fork(pid_t *pid, fc_spawn_request *request) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return errno;
  request->error_pipe = ends[1];
  unsigned long all = ~0UL, previous = 0;
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &previous, FC_SIGSET_BYTES);
  int saved_errno = errno;
  pid_t child_pid = fork();
  if (child_pid == 0) {
    child(request);
    syscall(SYS_exit_group, 127);
  }
  int fork_error = child_pid < 0 ? errno : 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &previous, NULL, FC_SIGSET_BYTES);
  close(ends[1]);
  if (child_pid < 0) {
    close(ends[0]);
    errno = saved_errno;
    return fork_error;
  }
  int error = 0;
  ssize_t got;
  while ((got = read(ends[0], &error, sizeof error)) < 0 && errno == EINTR) {}
  close(ends[0]);
  if (got == (ssize_t)sizeof error && error != 0) {
    int status;
    while (waitpid(child_pid, &status, 0) < 0 && errno == EINTR) {}
    errno = saved_errno;
    return error;
  }
  errno = saved_errno;
  *pid = child_pid;
  return 0;
}

int fc_spawn(
  pid_t *pid, const char *path, char *const argv[], char *const envp[],
  const fc_spawn_action *actions, size_t action_count, int new_process_group, int death_signal,
  pid_t parent) {
  fc_spawn_request request = {
    .path = path,
    .argv = argv,
    .envp = envp,
    .actions = actions,
    .action_count = action_count,
    .new_process_group = new_process_group,
    .death_signal = death_signal,
    .parent = parent,
    .error = 0,
    .error_pipe = -1,
  };
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FC_SPAWN_BY_FORK 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FC_SPAWN_BY_FORK 1
#endif
#ifdef FC_SPAWN_BY_FORK
  return fc_spawn_by_fork(pid, &request);
#endif
  request.error_pipe = -1;
  const size_t stack_size = 128 * 1024;
  void *stack = mmap(
    NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return errno;
  // Every signal, glibc's own two (cancellation, setxid) included, which sigfillset leaves out.
  unsigned long all = ~0UL, previous = 0;
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &previous, FC_SIGSET_BYTES);
  int saved_errno = errno;
  pid_t child_pid =
    clone(child, (char *)stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, &request);
  int clone_error = child_pid < 0 ? errno : 0;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &previous, NULL, FC_SIGSET_BYTES);
  munmap(stack, stack_size);
  errno = saved_errno;
  if (child_pid < 0) return clone_error;
  if (request.error != 0) {
    int status;
    while (waitpid(child_pid, &status, 0) < 0 && errno == EINTR) {}
    errno = saved_errno;
    return request.error;
  }
  *pid = child_pid;
  return 0;
}

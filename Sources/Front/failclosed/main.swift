import FailClosedCLI
import FailClosedSupport
import Foundation

BlockingIO.ignoreSIGPIPE()
// A parent may start us with SIGINT/SIGTERM blocked (a program spawned from a dispatch worker
// thread inherits its full block mask): unblock them, or teardown on a signal could never run.
var termination = sigset_t()
sigemptyset(&termination)
sigaddset(&termination, SIGINT)
sigaddset(&termination, SIGTERM)
sigprocmask(SIG_UNBLOCK, &termination, nil)
exit(await FailClosedMain.run(Array(CommandLine.arguments.dropFirst())))

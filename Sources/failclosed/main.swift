import FailClosedCLI
import FailClosedSupport
import Foundation

BlockingIO.ignoreSIGPIPE()
exit(await FailClosedMain.run(Array(CommandLine.arguments.dropFirst())))

import Foundation

exit(CommandLineTool.run(CommandLine.arguments))

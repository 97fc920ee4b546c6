import Foundation
import TestSupport

let scenariosDirectory = repositoryRoot + "/Scenarios"

/// Runs a tool to completion and returns its exit status and output (stdout then stderr).
func runTool(_ path: String, _ arguments: [String], stdin: String? = nil) throws -> (
  status: Int32, output: String
) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  let out = Pipe()
  process.standardOutput = out
  process.standardError = out
  let input = Pipe()
  process.standardInput = input
  try process.run()
  if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
  try input.fileHandleForWriting.close()
  let data = out.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A fresh temporary directory, removed by the caller.
func makeTemporaryDirectory() throws -> String {
  let path = NSTemporaryDirectory() + "failclosed-scenarios-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

import FailClosedCLI
import Testing

@Suite struct ArgumentParserTests {
  let options = [
    OptionSpec("port", .single, help: "port"),
    OptionSpec("allow", .repeated, help: "allow"),
    OptionSpec("no-tor", .flag, help: "no tor"),
  ]

  @Test func parsesEveryKindAndTheTrailingCommand() throws {
    let parsed = try ArgumentParser.parse(
      ["--port", "1", "--allow=a:1", "--allow", "b:2", "--no-tor", "file", "--", "curl", "--x"],
      options: options)
    #expect(parsed.value("port") == "1")
    #expect(parsed.all("allow") == ["a:1", "b:2"])
    #expect(parsed.has("no-tor"))
    #expect(parsed.positional == ["file"])
    #expect(parsed.trailing == ["curl", "--x"])
  }

  @Test func errorsNameTheArgumentAtFault() {
    #expect(throws: UsageError("unknown option '--bogus'")) {
      try ArgumentParser.parse(["--bogus"], options: options)
    }
    #expect(throws: UsageError("--port needs a value (VALUE)")) {
      try ArgumentParser.parse(["--port"], options: options)
    }
    #expect(throws: UsageError("--port given twice")) {
      try ArgumentParser.parse(["--port", "1", "--port", "2"], options: options)
    }
    #expect(throws: UsageError("--no-tor takes no value")) {
      try ArgumentParser.parse(["--no-tor=1"], options: options)
    }
    #expect(throws: UsageError("unknown option '-x' (options are spelled --name)")) {
      try ArgumentParser.parse(["-x"], options: options)
    }
  }

  @Test func integerValuesAreRangeChecked() throws {
    let parsed = try ArgumentParser.parse(["--port", "70000"], options: options)
    #expect(throws: UsageError("--port: expected an integer in 1...65535, got '70000'")) {
      try parsed.integer("port", in: 1...65535)
    }
  }

  @Test func unknownCommandIsAUsageError() async {
    #expect(await FailClosedMain.run(["nonsense"]) == ExitCode.usage)
    #expect(await FailClosedMain.run(["version"]) == ExitCode.pass)
    #expect(await FailClosedMain.run(["version", "--help"]) == ExitCode.pass)
  }
}

@Suite struct ShortOptionTests {
  @Test func aOneLetterOptionIsSpelledWithOneDash() throws {
    let options = [OptionSpec("o", .single, valueName: "FILE", help: "out")]
    let parsed = try ArgumentParser.parse(["convert", "-o", "x.json", "in.json"], options: options)
    #expect(parsed.value("o") == "x.json")
    #expect(parsed.positional == ["convert", "in.json"])
    #expect(throws: UsageError.self) { try ArgumentParser.parse(["-o"], options: options) }
    #expect(throws: UsageError.self) { try ArgumentParser.parse(["-x"], options: options) }
  }
}

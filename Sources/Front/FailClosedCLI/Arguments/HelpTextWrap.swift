/// Words wrapped into lines of at most `width` columns for `--help`, where parts of a text
/// come from a registry and their length is not known when the text is written.
enum HelpTextWrap {
  /// `text`'s words in lines: the first starts with `first`, the others with `indent`. A word
  /// longer than a line gets a line of its own.
  static func lines(_ text: String, width: Int = 96, first: String = "", indent: String = "")
    -> [String]
  {
    lines(
      words: text.split(separator: " ").map(String.init), width: width, first: first,
      indent: indent)
  }

  /// `words` (each kept whole, spaces and all: "[--bitchat-src DIR]") in lines, as above.
  static func lines(words: [String], width: Int = 96, first: String = "", indent: String = "")
    -> [String]
  {
    var lines: [String] = []
    var line = first
    var empty = true
    for word in words {
      if !empty, line.count + 1 + word.count > width {
        lines.append(line)
        line = indent
        empty = true
      }
      line += (empty ? "" : " ") + word
      empty = false
    }
    if !empty { lines.append(line) }
    return lines
  }
}

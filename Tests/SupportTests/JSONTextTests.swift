import FailClosedSupport
import Foundation
import Testing

@Suite struct JSONTextTests {
  @Test func quotesWhatJSONRequiresAndRoundTrips() throws {
    let text = "a\"b\\c\nd\re\tf\u{01}g\u{1f}<h>é😀"
    let quoted = JSONText.quote(text)
    #expect(quoted == #""a\"b\\c\nd\re\tf\u0001g\u001f<h>é😀""#)
    let parsed = try JSONSerialization.jsonObject(
      with: Data(quoted.utf8), options: .fragmentsAllowed)
    #expect(parsed as? String == text)
  }

  @Test func escapesLessThanOnlyWhenAsked() {
    #expect(JSONText.quote("</script>", escapingLessThan: true) == #""\u003c/script>""#)
    #expect(JSONText.quote("</script>") == #""</script>""#)
  }
}

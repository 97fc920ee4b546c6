/// What tor answers when a client speaks HTTP to its SOCKS port: the page from tor's
/// proto_socks.c (SOCKS_PROXY_IS_NOT_AN_HTTP_PROXY_MSG), sent with its terminating NUL
/// (`replylen = strlen(reply) + 1`), then the connection is closed. Checked byte for byte
/// against Debian's tor 0.4.9.11 by the differential test.
public enum TorHTTPRejection {
  /// First bytes tor treats as HTTP: GET, HEAD, POST/PUT, CONNECT.
  public static let httpFirstBytes: Set<UInt8> = [
    UInt8(ascii: "G"), UInt8(ascii: "H"), UInt8(ascii: "P"), UInt8(ascii: "C"),
  ]

  public static let page = """
    HTTP/1.0 501 Tor is not an HTTP Proxy\r
    Content-Type: text/html; charset=iso-8859-1\r
    \r
    <html>
    <head>
    <title>This is a SOCKS Proxy, Not An HTTP Proxy</title>
    </head>
    <body>
    <h1>This is a SOCKS proxy, not an HTTP proxy.</h1>
    <p>
    It appears you have configured your web browser to use this Tor port as
    an HTTP proxy.
    </p>
    <p>
    This is not correct: This port is configured as a SOCKS proxy, not
    an HTTP proxy. If you need an HTTP proxy tunnel, use the HTTPTunnelPort
    configuration option in place of, or in addition to, SOCKSPort.
    Please configure your client accordingly.
    </p>
    <p>
    See <a href="https://www.torproject.org/documentation.html">https://www.torproject.org/documentation.html</a> for more information.
    </p>
    </body>
    </html>

    """

  /// The exact bytes on the wire.
  public static var bytes: [UInt8] { Array(page.utf8) + [0] }
}

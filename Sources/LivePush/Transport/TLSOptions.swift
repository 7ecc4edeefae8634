/// How an `rtmps://` push checks the server it talks to. Unused for `rtmp://`.
///
/// By default the server's certificate chain must lead to a CA of the system store (Debian's
/// ca-certificates) and name the URL's host (a DNS name, or an IP address in the certificate's
/// IP addresses). The check runs right after the TLS handshake, before any RTMP byte, so a
/// server that fails it never sees the stream key.
public struct TLSOptions: Sendable, Equatable {
    /// A PEM file of CA certificates to trust *instead of* the system store, like curl's
    /// `--cacert`: for a private CA, or to pin the CAs a service uses. Read at every connect,
    /// so a renewed bundle takes effect on the next reconnect.
    public var caFile: String?
    /// `false` accepts any certificate: the link is encrypted, but anyone on the network path
    /// can pose as the server and read the stream key. For tests against a throwaway server.
    public var verifyServer: Bool

    /// Creates TLS options.
    public init(caFile: String? = nil, verifyServer: Bool = true) {
        self.caFile = caFile
        self.verifyServer = verifyServer
    }
}

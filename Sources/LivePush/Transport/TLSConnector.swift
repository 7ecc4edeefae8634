#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts TLS for an `rtmps://` URL on the connected socket and checks the server, before a
/// single RTMP byte (handshake, `connect` with its tcUrl, `publish` with the key) is sent.
///
/// What is checked is ``TLSOptions``: the chain must lead to a trusted CA, and the certificate
/// must name the URL's host, an IP address by its IP address entries. SNI carries DNS names
/// only: RFC 6066 does not allow addresses in it.
enum TLSConnector {
    struct Connection {
        /// The GnuTLS session, for librtmp's `m_sb.sb_ssl`; librtmp owns and frees it from then on.
        let session: UnsafeMutableRawPointer
        /// The trusted CAs the session refers to: keep them until the session is closed.
        let credentials: GnuTLS.Credentials
    }

    static func start(fd: Int32, host: String, port: Int, options: TLSOptions, timeout: Duration) throws(LivePushError) -> Connection {
        let credentials = try credentials(for: options)
        let session = try GnuTLS.clientSession(
            fd: fd, serverName: isIPAddress(host) ? nil : host, verifyName: options.verifyServer ? host : nil,
            credentials: credentials, timeout: timeout, label: "\(host):\(port)")
        return Connection(session: session, credentials: credentials)
    }

    /// The system store (some 140 certificates) is read once per process and shared; a CA file
    /// is read at every connect, so a renewed bundle counts from the next reconnect on.
    private static func credentials(for options: TLSOptions) throws(LivePushError) -> GnuTLS.Credentials {
        guard options.verifyServer else { return try untrusting.get() }
        if let caFile = options.caFile { return try GnuTLS.Credentials.trusting(caFile: caFile) }
        return try systemTrust.get()
    }

    private static let systemTrust = Result { () throws(LivePushError) in try GnuTLS.Credentials.systemTrust() }
    private static let untrusting = Result { () throws(LivePushError) in try GnuTLS.Credentials.empty() }

    static func isIPAddress(_ host: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
    }
}

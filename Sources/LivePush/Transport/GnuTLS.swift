import CGnuTLS

/// The one file that calls GnuTLS: its pointers stay in here, callers see safe Swift.
///
/// Debian's librtmp is built with GnuTLS and could run rtmps:// itself, but it verifies no
/// certificate. So LivePush runs the handshake and the check here and hands librtmp the
/// finished session (`m_sb.sb_ssl`): librtmp then reads and writes through it
/// (`gnutls_record_recv`/`gnutls_record_send`) and ends and frees it in `RTMP_Close`
/// (`gnutls_bye`, `gnutls_deinit`).
enum GnuTLS {
    /// The CA certificates a session trusts. GnuTLS lets one credentials object serve sessions
    /// on several threads as long as nobody changes it, and nothing does after loading.
    /// `@unchecked Sendable` only because it wraps a C handle (the credentials pointer).
    final class Credentials: @unchecked Sendable {
        fileprivate let raw: gnutls_certificate_credentials_t

        private init() throws(LivePushError) {
            var raw: gnutls_certificate_credentials_t?
            guard gnutls_certificate_allocate_credentials(&raw) == GNUTLS_E_SUCCESS, let raw else {
                throw LivePushError(.outOfMemory, "gnutls_certificate_allocate_credentials")
            }
            self.raw = raw
        }

        deinit { gnutls_certificate_free_credentials(raw) }

        /// Trusts nothing: for sessions that do not verify the server.
        static func empty() throws(LivePushError) -> Credentials { try Credentials() }

        /// Trusts the system's CA store (Debian: the ca-certificates package).
        static func systemTrust() throws(LivePushError) -> Credentials {
            let credentials = try Credentials()
            let loaded = gnutls_certificate_set_x509_system_trust(credentials.raw)
            guard loaded > 0 else {
                throw LivePushError(.tlsVerificationFailed, loaded < 0
                    ? "the system CA store could not be read: \(message(loaded))"
                    : "the system CA store is empty (is ca-certificates installed?)")
            }
            return credentials
        }

        /// Trusts the CA certificates of a PEM file, and only those.
        static func trusting(caFile path: String) throws(LivePushError) -> Credentials {
            let credentials = try Credentials()
            let loaded = gnutls_certificate_set_x509_trust_file(credentials.raw, path, GNUTLS_X509_FMT_PEM)
            guard loaded > 0 else {
                throw LivePushError(.tlsVerificationFailed, loaded < 0
                    ? "the CA file \(path) could not be read: \(message(loaded))"
                    : "the CA file \(path) holds no PEM certificate")
            }
            return credentials
        }
    }

    /// Runs a client handshake on the connected socket `fd` and, given `verifyName`, checks the
    /// server's chain against `credentials` and that it names `verifyName`. `serverName` goes
    /// out as SNI. Returns the session for librtmp, which owns it from then on; on failure the
    /// session is gone and only `fd` is left to close.
    static func clientSession(
        fd: Int32, serverName: String?, verifyName: String?, credentials: Credentials, timeout: Duration, label: String
    ) throws(LivePushError) -> UnsafeMutableRawPointer {
        var created: gnutls_session_t?
        guard gnutls_init(&created, UInt32(GNUTLS_CLIENT)) == GNUTLS_E_SUCCESS, let session = created else {
            throw LivePushError(.outOfMemory, "gnutls_init")
        }
        var handedOver = false
        defer { if !handedOver { gnutls_deinit(session) } }

        guard gnutls_set_default_priority(session) == GNUTLS_E_SUCCESS,
              gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, UnsafeMutableRawPointer(credentials.raw)) == GNUTLS_E_SUCCESS
        else { throw LivePushError(.handshakeFailed, "\(label): the TLS session could not be set up") }
        if let serverName {
            _ = gnutls_server_name_set(session, GNUTLS_NAME_DNS, serverName, serverName.utf8.count)
        }
        gnutls_transport_set_int2(session, fd, fd)
        gnutls_handshake_set_timeout(session, UInt32(clamping: max(1, timeout.milliseconds)))

        var result: Int32
        repeat { result = gnutls_handshake(session) } while result == GNUTLS_E_INTERRUPTED
        guard result == GNUTLS_E_SUCCESS else {
            // The socket's receive timeout surfaces as E_AGAIN, GnuTLS's own as E_TIMEDOUT.
            let timedOut = result == GNUTLS_E_AGAIN || result == GNUTLS_E_TIMEDOUT
            throw LivePushError(.handshakeFailed, "\(label): TLS handshake " + (timedOut ? "timed out" : "failed: \(message(result))"))
        }

        if let verifyName {
            var status: UInt32 = 0
            let checked = gnutls_certificate_verify_peers3(session, verifyName, &status)
            guard checked == GNUTLS_E_SUCCESS, status == 0 else {
                // Tell the server why it is being dropped, as a TLS library does when it refuses a certificate.
                _ = gnutls_alert_send(session, GNUTLS_AL_FATAL, GNUTLS_A_BAD_CERTIFICATE)
                let reason = checked == GNUTLS_E_SUCCESS
                    ? CertificateProblem.describe(status, host: verifyName) : message(checked)
                throw LivePushError(.tlsVerificationFailed, "\(label): \(reason)")
            }
        }
        handedOver = true
        return UnsafeMutableRawPointer(session)
    }

    /// The MD5 digest of `bytes` (an auth_key's HASH: the push protocol's choice, not ours).
    /// GnuTLS is linked for rtmps:// anyway; a second crypto library only for this cost the
    /// build minutes (BoringSSL).
    static func md5(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 16)
        let rc = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBytes { output in
                gnutls_hash_fast(GNUTLS_DIG_MD5, input.baseAddress, input.count, output.baseAddress)
            }
        }
        precondition(rc == 0, "GnuTLS refused MD5: \(message(rc))")
        return digest
    }

    /// Decrypted bytes GnuTLS holds that nobody has read yet. They arrived in a record that was
    /// read whole from the socket, so the socket does not poll readable for them.
    static func pendingBytes(in session: UnsafeMutableRawPointer) -> Int {
        gnutls_record_check_pending(OpaquePointer(session))
    }

    /// What one read of a session gave: bytes, the end of the stream, nothing yet (its socket is
    /// non-blocking and a record is not complete: GnuTLS keeps the part it has), or a failure.
    enum ReadResult {
        case bytes(Int)
        case closed
        case wouldBlock
        case failed(String)
    }

    /// Reads decrypted bytes into `buffer`. `uncleanCloseEnds`: a peer that closes without
    /// close_notify ends the stream rather than failing it (HTTP servers commonly do; a response
    /// framed by its length or chunks still tells a cut from an end).
    static func receive(
        from session: UnsafeMutableRawPointer, into buffer: UnsafeMutableRawBufferPointer, uncleanCloseEnds: Bool = false
    ) -> ReadResult {
        let n = gnutls_record_recv(OpaquePointer(session), buffer.baseAddress, buffer.count)
        if n > 0 { return .bytes(n) }
        if n == 0 { return .closed }
        if uncleanCloseEnds, n == Int(GNUTLS_E_PREMATURE_TERMINATION) { return .closed }
        if n == Int(GNUTLS_E_AGAIN) || n == Int(GNUTLS_E_INTERRUPTED) { return .wouldBlock }
        return .failed(message(Int32(n)))
    }

    /// Sends all of `bytes` on a session whose socket is blocking (with a send timeout):
    /// nil when they went out, else why not (`timedOut` when the send timeout struck).
    static func send(_ bytes: [UInt8], on session: UnsafeMutableRawPointer) -> (reason: String, timedOut: Bool)? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { gnutls_record_send(OpaquePointer(session), $0.baseAddress, $0.count) }
            if n > 0 {
                offset += n
            } else if n == Int(GNUTLS_E_INTERRUPTED) {
                continue
            } else {
                // A blocking socket's SO_SNDTIMEO surfaces as E_AGAIN. GnuTLS then keeps the
                // record it began, but the connection is given up anyway.
                return (message(Int32(n)), n == Int(GNUTLS_E_AGAIN))
            }
        }
        return nil
    }

    /// Ends a session the caller owns (one not handed to librtmp): close_notify, without
    /// waiting for the server's (which would cost up to the receive timeout), then frees it.
    static func close(_ session: UnsafeMutableRawPointer) {
        _ = gnutls_bye(OpaquePointer(session), GNUTLS_SHUT_WR)
        gnutls_deinit(OpaquePointer(session))
    }

    private static func message(_ code: Int32) -> String { String(cString: gnutls_strerror(code)) }
}

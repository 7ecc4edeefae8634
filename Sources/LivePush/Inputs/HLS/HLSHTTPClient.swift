/// The HLS input's HTTP: one `GET` per playlist load or segment, over the project's own client
/// (``HTTPConnection``: a connection per request, TLS through GnuTLS with the server verified as
/// for rtmps:// and WHIP, every read within the deadline) and with a bounded body.
///
/// Redirects (301, 302, 303, 307, 308) are followed twice at most, never from https:// to
/// http://. Whatever fails is `mediaReadFailed`, naming the URL with its secrets masked and
/// the server's words escaped, so that the live input's retry and failover take it as any
/// feed's failure.
struct HLSHTTPClient: Sendable {
    let tls: TLSOptions

    /// The body of `url` and the URL it finally came from (relative URIs resolve against it).
    func get(_ url: HLSURL, timeout: Duration, maxBytes: Int) throws(LivePushError) -> (body: [UInt8], url: HLSURL) {
        let deadline = ContinuousClock.now + timeout
        var target = url
        for _ in 0..<3 {
            let response: HTTPMessage
            do throws(LivePushError) {
                // The target is visible ASCII (HLSURL): nothing in it can end the line.
                let request = Array(("GET \(target.target) HTTP/1.1\r\nHost: \(target.authority)\r\nUser-Agent: LivePush\r\n"
                                     + "Accept: */*\r\nConnection: close\r\n\r\n").utf8)
                let connection = try HTTPConnection(to: target.connectionURL(), tls: tls, deadline: deadline)
                defer { connection.close() }
                response = try connection.exchange(request, deadline: deadline, maxBodyBytes: maxBytes)
            } catch {
                throw Self.failure(target, error.code == .whipTimeout ? "no complete answer within \(timeout)" : (error.detail ?? error.message),
                                   code: error.code == .tlsVerificationFailed ? .tlsVerificationFailed : .mediaReadFailed)
            }
            switch response.status {
            case 200:
                return (response.body, target)
            case 301, 302, 303, 307, 308:
                guard let location = response.value(of: "Location") else {
                    throw Self.failure(target, "\(response.status) without a Location")
                }
                let next: HLSURL
                do throws(LivePushError) {
                    next = try target.resolve(location)
                } catch {
                    throw Self.failure(target, "a redirect to no usable http(s) URL")
                }
                guard !(target.secure && !next.secure) else {
                    throw Self.failure(target, "refused a redirect from https:// to http://")
                }
                target = next
            default:
                throw Self.failure(target, "HTTP \(response.status) \(TerminalText.escape(response.reason, limit: 80))")
            }
        }
        throw Self.failure(url, "redirected more than twice")
    }

    static func failure(_ url: HLSURL, _ why: String, code: LivePushError.Code = .mediaReadFailed) -> LivePushError {
        LivePushError(code, "\(url): \(why)")
    }
}

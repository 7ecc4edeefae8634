#if canImport(Glibc)
import Glibc
#endif

/// An `http(s)://…/name.m3u8` HLS output's origin: each file is uploaded with `PUT` and a
/// segment that left the window is removed with `DELETE`, as FFmpeg's hls muxer does with
/// `-method PUT` and `delete_segments`. HTTP/1.1 over LivePush's own client (``HTTPConnection``:
/// TLS through GnuTLS, the server verified as for rtmps:// and WHIP, `--ca-file`), one
/// connection per request, each within ``timeout``.
///
/// A request that fails for the network's sake (no answer, a reset, a 5xx, 408 or 429) is tried
/// again, ``attempts`` times in all, after 250 ms then 500 ms; any other answer is final. The
/// bearer token goes only to the URL's own origin (no redirect is followed: a 3xx is a failure)
/// and never over http://, where anyone on the path could read it: a token with an http:// URL
/// fails the connect. What the origin says in an error is cut and escaped, the token masked.
struct HLSHTTPStore: HLSStore {
    /// The playlist's URL: its origin and directory are where every file goes.
    let playlist: PushURL
    let token: String?
    let tls: TLSOptions
    /// Per request: connect, TLS, request and response together.
    let timeout: Duration
    static let attempts = 3

    init(playlist: PushURL, token: String?, tls: TLSOptions, timeout: Duration) {
        self.playlist = playlist
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
        self.tls = tls
        self.timeout = timeout
    }

    /// The query the origin wants on every request (its own parameters, not the hls_ options).
    private var originQuery: String { playlist.hlsOptions?.originQuery ?? "" }

    func check() throws(LivePushError) {
        // A CR or LF in the token would end the field and start another one of the caller's choosing.
        if let token, !token.utf8.allSatisfy({ $0 == 0x20 || (0x21...0x7E).contains($0) }) {
            throw LivePushError(.tokenInvalid, "the token holds characters an HTTP field cannot carry")
        }
        if token != nil && playlist.scheme != .https {
            throw LivePushError(.hlsWriteFailed, "\(playlist.redacted): a bearer token is never sent over http://; use https://")
        }
    }

    func perform(_ write: HLSWrite) throws(LivePushError) {
        var delay: Duration = .milliseconds(250)
        for attempt in 1...Self.attempts {
            do throws(Failure) {
                return try send(write)
            } catch let failure {
                guard failure.retried, attempt < Self.attempts else { throw failure.error }
                var pause = timespec(tv_sec: Int(delay.components.seconds), tv_nsec: Int(delay.components.attoseconds / 1_000_000_000))
                nanosleep(&pause, nil)
                delay *= 2
            }
        }
    }

    /// One request's failure, and whether it is worth another attempt.
    private struct Failure: Error {
        var error: LivePushError
        var retried: Bool
    }

    private func send(_ write: HLSWrite) throws(Failure) {
        let (method, body, type): (String, [UInt8], String?) = switch write {
        case .put(let name, let bytes): ("PUT", bytes, Self.contentType(of: name))
        case .delete: ("DELETE", [], nil)
        }
        let target = path(of: write.name)
        // The URL as logs show every push URL (secrets in its query masked), and the file.
        let shown = "\(method) \(write.name) beside \(playlist.redacted)"
        let request = self.request(method, target: target, contentType: type, body: body)
        let deadline = ContinuousClock.now + timeout
        let response: HTTPMessage
        do throws(LivePushError) {
            let connection = try HTTPConnection(to: playlist, tls: tls, deadline: deadline)
            response = try connection.exchange(request, deadline: deadline)
            connection.close()
        } catch {
            // Refused, reset, timed out, a reply that is no HTTP: the network's, worth another try,
            // but not a certificate that does not verify.
            let detail = WHIPClient.scrub(error.detail ?? error.code.sentence, token, limit: 160)
            throw Failure(error: LivePushError(error.code == .tlsVerificationFailed ? .tlsVerificationFailed : .hlsWriteFailed,
                                               "\(shown): \(detail)"),
                          retried: error.code != .tlsVerificationFailed)
        }
        let accepted: ClosedRange<Int> = 200...299
        if accepted.contains(response.status) || (method == "DELETE" && (response.status == 404 || response.status == 410)) { return }
        var detail = "\(shown): HTTP \(response.status)"
        let reason = WHIPClient.scrub(response.reason, token, limit: 80)
        if !reason.isEmpty { detail += " \(reason)" }
        let said = WHIPClient.scrub(String(response.text.prefix(160)), token, limit: 160)
        if !said.isEmpty { detail += ": \(said)" }
        let code: LivePushError.Code = [401, 403].contains(response.status) ? .tokenInvalid : .hlsWriteFailed
        throw Failure(error: LivePushError(code, detail),
                      retried: (500...599).contains(response.status) || response.status == 408 || response.status == 429)
    }

    /// The request target of `name`: the playlist's directory, and the origin's own query.
    private func path(of name: String) -> String {
        "\(Self.directory(of: playlist))/\(name)" + (originQuery.isEmpty ? "" : "?\(originQuery)")
    }

    /// `/live/ch1` of `https://host/live/ch1/index.m3u8` ("" at the root).
    static func directory(of url: PushURL) -> String {
        url.app == "/" ? "" : url.app
    }

    private func request(_ method: String, target: String, contentType: String?, body: [UInt8]) -> [UInt8] {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(LocationResolver.authority(of: playlist))\r\nUser-Agent: LivePush\r\n"
        // Only over TLS (``check()`` refuses a token with http://), to the URL's own origin.
        if let token, playlist.scheme == .https { head += "Authorization: Bearer \(token)\r\n" }
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    private static func contentType(of name: String) -> String {
        if name.hasSuffix(".m3u8") { return "application/vnd.apple.mpegurl" }
        if name.hasSuffix(".m4s") { return "video/iso.segment" }
        return name.hasSuffix(".mp4") ? "video/mp4" : "video/mp2t"
    }
}

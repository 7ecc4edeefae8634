/// What an ICE-restart PATCH came to (RFC 9725 §4.4).
enum WHIPRestartResult: Sendable, Equatable {
    /// 200: the endpoint's answer fragment (for ``ICERestartAnswer``) and the session's new
    /// ETag, which later PATCHes carry (nil: it sent none; the old one stays).
    case restarted(fragment: String, etag: String?)
    /// 405, 422 or 501: the endpoint does no ICE restarts; a new POST instead.
    case notSupported
}

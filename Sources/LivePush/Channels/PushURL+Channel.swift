extension PushURL {
    /// What a channel may send to (its configuration's outputs and the control API's adds):
    /// RTMP, SRT, or an HLS upload to an origin (`http(s)://…/name.m3u8`, which may carry a
    /// ladder). Not WHIP (interactive mode is for a push), and not an HLS output to `file://`:
    /// a control API caller must not choose where the process writes files. Returns the URL;
    /// throws `invalidURL`.
    @discardableResult
    static func checkChannelOutput(_ url: String) throws(LivePushError) -> PushURL {
        let output = try PushURL(url)
        guard !output.isWHIP, output.scheme != .file else {
            throw LivePushError(.invalidURL, "a channel's output is an rtmp://, rtmps://, srt:// or http(s)://…/name.m3u8 (HLS upload) URL")
        }
        return output
    }
}

/// An HLS output's writer, made with the output: it lives as long as the output, across its
/// connections, so that a reconnect goes on with the same playlist.
extension PushOutput {
    /// The writer for `url` when it is an HLS output: its store, options, cue forms
    /// (``PushConfig/cueFormat(forOutput:)``), and the push's wall-clock start, read once here
    /// (the segments' `#EXT-X-PROGRAM-DATE-TIME` count from it).
    static func hlsWriter(for url: PushURL, id: Int, config: PushConfig) -> HLSWriter? {
        guard url.isHLS, let options = url.hlsOptions else { return nil }
        let store: any HLSStore = url.scheme == .file
            ? HLSFileStore(directory: url.app)
            : HLSHTTPStore(playlist: url, token: config.hlsToken, tls: config.tls, timeout: config.connectTimeout)
        return HLSWriter(store: store, playlistName: url.streamName, options: options,
                         forms: HLSCueTags.Forms(config.cueFormat(forOutput: id)), wallStart: config.wallClock.nowMicroseconds)
    }
}

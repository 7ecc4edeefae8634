import CFFmpeg

/// What libavformat may open for an input, given to `avformat_open_input` as options.
///
/// An input can name other inputs: an HLS playlist its segments, a concat list its files, an
/// IMF composition its tracks, an SDP file its RTP sockets. Unchecked, a local file handed in
/// by someone else could make LivePush read other files or reach URLs. So every input opens
/// with a protocol whitelist (the nested opens inherit it): `file` for a local file, `pipe`
/// for standard input, the URL's own protocols for a URL the user gave. And demuxers that
/// follow references are left out of the format whitelist, so such a file is refused before
/// its header is read.
enum FFInputPolicy {
    /// Demuxers that open inputs named inside the input.
    static let demuxersThatOpenOthers: Set<String> = ["hls", "applehttp", "concat", "imf", "dash", "sdp", "rtsp", "rtp"]

    static let localFileProtocols = "file"
    static let standardInputProtocols = "pipe"
    /// What an http(s) URL needs underneath.
    static let webProtocols = "http,https,tcp,tls,crypto,httpproxy"

    /// Every demuxer this libavformat has, but those that follow references.
    static let formatWhitelist: String = {
        var names: [String] = []
        var state: UnsafeMutableRawPointer?
        while let demuxer = av_demuxer_iterate(&state) {
            let aliases = String(cString: demuxer.pointee.name).split(separator: ",").map(String.init)
            if aliases.allSatisfy({ !demuxersThatOpenOthers.contains($0) }) { names += aliases }
        }
        return names.joined(separator: ",")
    }()

    /// The options for an input opened through `protocols`; the caller frees them (`av_dict_free`).
    /// `playlists`: an http(s) URL the user gave may be HLS, whose demuxer opens its segments
    /// (through the same protocols).
    static func options(protocols: String, playlists: Bool = false) -> OpaquePointer? {
        var options: OpaquePointer?
        av_dict_set(&options, "protocol_whitelist", protocols, 0)
        av_dict_set(&options, "format_whitelist", playlists ? formatWhitelist + ",hls,applehttp" : formatWhitelist, 0)
        return options
    }

    /// The protocols a live input URL may use, by its scheme; nil when it is not a network
    /// input LivePush reads (a path, or a scheme it does not take).
    static func liveProtocols(for url: String) -> String? {
        guard let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") else { return nil }
        switch url[..<colon].lowercased() {
        case "rtmp": return "rtmp,tcp"
        case "rtmps": return "rtmps,rtmp,tcp,tls"
        case "srt": return "srt"
        case "http", "https": return webProtocols
        case "udp": return "udp"
        case "rtp": return "rtp,udp"
        default: return nil
        }
    }
}

/// An HLS output's streams: one media playlist at the URL, or, for an output with a ladder
/// (``StreamInfo/variants``), one media playlist per variant beside the URL (`index_v0.m3u8`,
/// `index_v1.m3u8`, segments `index_v0_3.ts`) and the master playlist at the URL.
///
/// Every variant's stream takes the same sound, cues and data (the sound is muxed into each),
/// and its own pictures (``MediaPacket/variant``). The variants' encoders put keyframes at the
/// same pictures (``RenditionStage/alignsKeyframes``), so each variant's segmenter, fed the same
/// keyframe times and the same splices, cuts at the same times: the same count, the same
/// boundaries. The master is written (whole, like every playlist) once every variant has a
/// segment, and again whenever a variant's measured bit rate changes it.
struct HLSVariantSet: Sendable {
    let playlistName: String
    private var streams: [HLSStream]
    /// The ladder's tracks, for the master (empty: one stream, no master).
    private let tracks: [VideoTrackInfo]
    private let audio: AudioTrackInfo?
    private var master: String?

    static func make(playlistName: String, options: HLSOptions, forms: HLSCueTags.Forms, info: StreamInfo,
                     wallStart: Int64) throws(LivePushError) -> HLSVariantSet {
        guard info.variants.count > 1 else {
            let stream = try HLSStream.make(playlistName: playlistName, options: options, forms: forms, info: info, wallStart: wallStart)
            return HLSVariantSet(playlistName: playlistName, streams: [stream], tracks: [], audio: info.audio)
        }
        let stem = HLSStream.stem(of: playlistName)
        var streams: [HLSStream] = []
        for (index, track) in info.variants.enumerated() {
            var variant = info
            variant.video = track
            variant.variants = []
            streams.append(try HLSStream.make(playlistName: "\(stem)_v\(index).m3u8", segmentStem: "\(stem)_v\(index)_", options: options,
                                              forms: forms, info: variant, wallStart: wallStart))
        }
        return HLSVariantSet(playlistName: playlistName, streams: streams, tracks: info.variants, audio: info.audio)
    }

    private init(playlistName: String, streams: [HLSStream], tracks: [VideoTrackInfo], audio: AudioTrackInfo?) {
        self.playlistName = playlistName
        self.streams = streams
        self.tracks = tracks
        self.audio = audio
    }

    /// What the first variant counted, with every variant's bytes.
    var figures: HLSFigures {
        var figures = streams[0].figures
        figures.bytesMuxed = streams.reduce(0) { $0 + $1.figures.bytesMuxed }
        return figures
    }

    /// The splices moved since the last call: the first variant's (every variant cuts alike).
    mutating func takeMovedSplices() -> [HLSStream.MovedSplice] {
        for index in streams.indices.dropFirst() { _ = streams[index].takeMovedSplices() }
        return streams[0].takeMovedSplices()
    }

    /// Takes one packet: a picture goes to its variant's stream, the rest to every stream.
    mutating func take(_ packet: MediaPacket) -> [HLSWrite] {
        guard streams.count > 1 else { return streams[0].take(packet) }
        var writes: [HLSWrite]
        if packet.kind == .video {
            let index = Int(packet.variant)
            guard streams.indices.contains(index) else { return [] }
            writes = streams[index].take(packet)
        } else {
            writes = []
            for index in streams.indices { writes += streams[index].take(packet) }
        }
        if !writes.isEmpty, let text = masterText(), text != master {
            master = text
            writes.append(.put(name: playlistName, bytes: Array(text.utf8)))
        }
        return writes
    }

    /// The end: every variant's last segment and final playlist, then the last master.
    mutating func finish() -> [HLSWrite] {
        var writes: [HLSWrite] = []
        for index in streams.indices { writes += streams[index].finish() }
        if streams.count > 1, let text = masterText(), text != master {
            master = text
            writes.append(.put(name: playlistName, bytes: Array(text.utf8)))
        }
        return writes
    }

    /// A CMAF muxer's failure in any variant, once.
    mutating func takeFailure() -> LivePushError? {
        for index in streams.indices { if let failure = streams[index].takeFailure() { return failure } }
        return nil
    }

    /// The master, once every variant has written a segment.
    private func masterText() -> String? {
        guard streams.allSatisfy({ $0.figures.segments > 0 }) else { return nil }
        var playlist = HLSMasterPlaylist(version: streams[0].options.segmentType == .fmp4 ? 7 : 3)
        for (stream, track) in zip(streams, tracks) {
            playlist.variants.append(.init(uri: stream.playlistName, peakBitsPerSecond: stream.figures.highestBitsPerSecond,
                                           averageBitsPerSecond: stream.figures.averageBitsPerSecond, width: track.width,
                                           height: track.height, frameRate: track.frameRate,
                                           codecs: HLSMasterPlaylist.codecs(video: track, audio: audio)))
        }
        return playlist.text
    }
}

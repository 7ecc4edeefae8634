/// An HLS master playlist (RFC 8216 §4.3.4.2) as a value: one `#EXT-X-STREAM-INF` per variant of
/// an output's ladder, each naming its media playlist. Pure: the bit rates are what the
/// variants' segments measured, given.
///
/// Sound is muxed into every variant (each variant's segments carry the push's one AAC track),
/// so there is no `#EXT-X-MEDIA` audio group: a player switching variants switches the sound
/// with the pictures, and each variant plays alone.
struct HLSMasterPlaylist: Sendable, Equatable {
    /// One variant as the master lists it.
    struct Variant: Sendable, Equatable {
        /// Its media playlist, relative to the master (`index_v0.m3u8`).
        var uri: String
        /// `BANDWIDTH`: the highest bit rate of one of its segments, bit/s.
        var peakBitsPerSecond: Int
        /// `AVERAGE-BANDWIDTH`: over its segments, bit/s.
        var averageBitsPerSecond: Int
        /// `RESOLUTION`, `FRAME-RATE` (0: unknown, left out), `CODECS`.
        var width: Int
        var height: Int
        var frameRate: Double
        var codecs: [String]
    }

    var variants: [Variant] = []
    /// `#EXT-X-VERSION` of the media playlists (7 with CMAF): the master says the same.
    var version = 3

    var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:\(version)", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for variant in variants {
            var attributes = ["BANDWIDTH=\(max(1, variant.peakBitsPerSecond))",
                              "AVERAGE-BANDWIDTH=\(max(1, variant.averageBitsPerSecond))"]
            if !variant.codecs.isEmpty { attributes.append("CODECS=\"\(variant.codecs.joined(separator: ","))\"") }
            attributes.append("RESOLUTION=\(variant.width)x\(variant.height)")
            if variant.frameRate > 0 { attributes.append("FRAME-RATE=\(Self.threeDecimals(variant.frameRate))") }
            lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
            lines.append(variant.uri)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `CODECS` for a stream (RFC 6381): `avc1.PPCCLL` from the avcC's profile, constraints and
    /// level bytes, `hvc1` and `av01` bare (their full strings need the SPS parsed), and
    /// `mp4a.40.N` from the AudioSpecificConfig's object type (2: AAC-LC).
    static func codecs(video: VideoTrackInfo?, audio: AudioTrackInfo?) -> [String] {
        var codecs: [String] = []
        if let video {
            switch video.codec {
            case .h264:
                let record = video.decoderConfiguration
                if record.count >= 4 { codecs.append("avc1." + record[1...3].map(hex).joined()) }
            case .hevc: codecs.append("hvc1")
            case .av1: codecs.append("av01")
            case .vp9: codecs.append("vp09")
            }
        }
        if let audio {
            let objectType = audio.audioSpecificConfig.first.map { Int($0 >> 3) } ?? 2
            codecs.append("mp4a.40.\(objectType == 0 ? 2 : objectType)")
        }
        return codecs
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    private static func threeDecimals(_ value: Double) -> String {
        let millis = Int((value * 1000).rounded())
        let fraction = millis % 1000
        return "\(millis / 1000)." + (fraction < 10 ? "00" : fraction < 100 ? "0" : "") + "\(fraction)"
    }
}

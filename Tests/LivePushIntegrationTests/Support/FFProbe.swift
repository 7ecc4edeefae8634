import Foundation

/// The decoded output of one `ffprobe` run over a media file: streams, container format and
/// (optionally) every packet.
///
///     let probe = try FFProbe.run(path)
///     XCTAssertEqual(probe.videoStream?.codecName, "h264")
///     XCTAssertTrue(probe.firstVideoIsKeyframe)
///     XCTAssertTrue(FFProbe.isMonotonic(dts: probe.videoPackets))
///
/// ffprobe prints some numbers as JSON strings ("sample_rate": "44100"); the decoders below
/// accept either form.
struct FFProbe: Sendable, Decodable {
    struct Stream: Sendable, Decodable {
        var index: Int
        var codecType: String?
        var codecName: String?
        var profile: String?
        var width: Int?
        var height: Int?
        var pixelFormat: String?
        var sampleRate: Int?
        var channels: Int?
        var hasBFrames: Int?
        /// Stream duration in seconds, when the container records one.
        var duration: Double?
        /// Container-declared frame count (MP4 only, usually).
        var frameCount: Int?
        /// Packets actually read; present only when probed with `countPackets: true`.
        var readPacketCount: Int?

        var isVideo: Bool { codecType == "video" }
        var isAudio: Bool { codecType == "audio" }

        enum CodingKeys: String, CodingKey {
            case index, profile, width, height, channels, duration
            case codecType = "codec_type", codecName = "codec_name", pixelFormat = "pix_fmt"
            case sampleRate = "sample_rate", hasBFrames = "has_b_frames"
            case frameCount = "nb_frames", readPacketCount = "nb_read_packets"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            index = try c.decode(Int.self, forKey: .index)
            codecType = try c.decodeIfPresent(String.self, forKey: .codecType)
            codecName = try c.decodeIfPresent(String.self, forKey: .codecName)
            profile = try c.decodeIfPresent(String.self, forKey: .profile)
            width = c.flexibleInt(.width)
            height = c.flexibleInt(.height)
            pixelFormat = try c.decodeIfPresent(String.self, forKey: .pixelFormat)
            sampleRate = c.flexibleInt(.sampleRate)
            channels = c.flexibleInt(.channels)
            hasBFrames = c.flexibleInt(.hasBFrames)
            duration = c.flexibleDouble(.duration)
            frameCount = c.flexibleInt(.frameCount)
            readPacketCount = c.flexibleInt(.readPacketCount)
        }
    }

    struct Format: Sendable, Decodable {
        var formatName: String?
        var streamCount: Int?
        /// Container duration in seconds.
        var duration: Double?
        var size: Int?
        var bitRate: Int?

        enum CodingKeys: String, CodingKey {
            case duration, size
            case formatName = "format_name", streamCount = "nb_streams", bitRate = "bit_rate"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            formatName = try c.decodeIfPresent(String.self, forKey: .formatName)
            streamCount = c.flexibleInt(.streamCount)
            duration = c.flexibleDouble(.duration)
            size = c.flexibleInt(.size)
            bitRate = c.flexibleInt(.bitRate)
        }
    }

    struct Packet: Sendable, Decodable {
        var streamIndex: Int
        var codecType: String?
        /// Timestamps in the stream's time base; absent when the container has none.
        var pts: Int64?
        var dts: Int64?
        /// Timestamps in seconds.
        var ptsTime: Double?
        var dtsTime: Double?
        /// Packet duration in seconds, when the container gives one.
        var durationTime: Double?
        var size: Int?
        /// ffprobe's flag string, e.g. "K_" (keyframe), "__", "_D" (discard).
        var flags: String

        var isKeyframe: Bool { flags.contains("K") }
        var isVideo: Bool { codecType == "video" }
        var isAudio: Bool { codecType == "audio" }

        enum CodingKeys: String, CodingKey {
            case pts, dts, size, flags
            case streamIndex = "stream_index", codecType = "codec_type"
            case ptsTime = "pts_time", dtsTime = "dts_time", durationTime = "duration_time"
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            streamIndex = try c.decode(Int.self, forKey: .streamIndex)
            codecType = try c.decodeIfPresent(String.self, forKey: .codecType)
            pts = c.flexibleInt64(.pts)
            dts = c.flexibleInt64(.dts)
            ptsTime = c.flexibleDouble(.ptsTime)
            dtsTime = c.flexibleDouble(.dtsTime)
            durationTime = c.flexibleDouble(.durationTime)
            size = c.flexibleInt(.size)
            flags = try c.decodeIfPresent(String.self, forKey: .flags) ?? ""
        }
    }

    enum Failure: Error, CustomStringConvertible {
        case ffprobeFailed(ProcessRunner.Result)
        case undecodable(String, underlying: any Error)

        var description: String {
            switch self {
            case .ffprobeFailed(let result): return "ffprobe failed: \(result.summary)"
            case .undecodable(let path, let error): return "could not decode ffprobe JSON for \(path): \(error)"
            }
        }
    }

    var streams: [Stream]
    var format: Format?
    /// Every packet in file order; empty when probed with `packets: false`.
    var packets: [Packet]

    enum CodingKeys: String, CodingKey { case streams, format, packets }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        streams = try c.decodeIfPresent([Stream].self, forKey: .streams) ?? []
        format = try c.decodeIfPresent(Format.self, forKey: .format)
        packets = try c.decodeIfPresent([Packet].self, forKey: .packets) ?? []
    }

    // MARK: Running ffprobe

    /// The ffprobe arguments used by `run` (exposed so failures can be reproduced by hand).
    static func arguments(for path: String, packets: Bool = true, countPackets: Bool = true) -> [String] {
        var entries = [
            "stream=index,codec_type,codec_name,profile,width,height,pix_fmt,sample_rate,channels,"
                + "has_b_frames,duration,nb_frames" + (countPackets ? ",nb_read_packets" : ""),
            "format=format_name,nb_streams,duration,size,bit_rate",
        ]
        if packets { entries.append("packet=stream_index,codec_type,pts,dts,pts_time,dts_time,duration_time,size,flags") }
        var args = ["-v", "error", "-hide_banner"]
        if countPackets { args.append("-count_packets") }
        args += ["-show_entries", entries.joined(separator: ":"), "-of", "json", path]
        return args
    }

    /// Probes `path` with ffprobe. `packets` lists every packet; `countPackets` fills in
    /// `Stream.readPacketCount`. Throws if ffprobe fails, times out, or prints undecodable JSON.
    static func run(
        _ path: String,
        packets: Bool = true,
        countPackets: Bool = true,
        timeout: TimeInterval = 30
    ) throws -> FFProbe {
        let result = try ProcessRunner.run("ffprobe", arguments(for: path, packets: packets, countPackets: countPackets),
                                           timeout: timeout)
        guard result.succeeded else { throw Failure.ffprobeFailed(result) }
        do {
            return try JSONDecoder().decode(FFProbe.self, from: result.stdout)
        } catch {
            throw Failure.undecodable(path, underlying: error)
        }
    }

    // MARK: Helpers

    var videoStreams: [Stream] { streams.filter(\.isVideo) }
    var audioStreams: [Stream] { streams.filter(\.isAudio) }
    var videoStream: Stream? { videoStreams.first }
    var audioStream: Stream? { audioStreams.first }

    /// Packets whose codec type is video (all video streams, file order).
    var videoPackets: [Packet] { packets.filter(\.isVideo) }
    /// Packets whose codec type is audio (all audio streams, file order).
    var audioPackets: [Packet] { packets.filter(\.isAudio) }

    func packets(forStream index: Int) -> [Packet] { packets.filter { $0.streamIndex == index } }

    /// Container duration in seconds (falls back to the longest stream duration).
    var duration: Double? { format?.duration ?? streams.compactMap(\.duration).max() }

    /// True when the first video packet in the file is a keyframe (false if there is no video).
    var firstVideoIsKeyframe: Bool { videoPackets.first?.isKeyframe ?? false }

    /// True when every stream's DTS sequence is non-decreasing (see `isMonotonic(dts:strict:)`).
    var dtsIsMonotonicPerStream: Bool {
        Set(packets.map(\.streamIndex)).allSatisfy { FFProbe.isMonotonic(dts: packets(forStream: $0)) }
    }

    /// True when the DTS values of `packets` never go backwards (`strict`: always increase).
    /// Pass packets of ONE stream: interleaved streams are generally not mutually monotonic.
    /// A packet without a DTS makes the result false, as does an empty list.
    static func isMonotonic(dts packets: [Packet], strict: Bool = false) -> Bool {
        guard !packets.isEmpty else { return false }
        var previous: Int64?
        for packet in packets {
            guard let dts = packet.dts else { return false }
            if let previous, strict ? dts <= previous : dts < previous { return false }
            previous = dts
        }
        return true
    }
}

private extension KeyedDecodingContainer {
    /// Decodes an integer that ffprobe may print either as a number or as a string.
    /// Missing, null and non-numeric values ("N/A") become nil.
    func flexibleInt64(_ key: Key) -> Int64? {
        if let value = try? decodeIfPresent(Int64.self, forKey: key) { return value }
        if let text = try? decodeIfPresent(String.self, forKey: key) { return Int64(text) }
        return nil
    }

    func flexibleInt(_ key: Key) -> Int? { flexibleInt64(key).map(Int.init) }

    func flexibleDouble(_ key: Key) -> Double? {
        if let value = try? decodeIfPresent(Double.self, forKey: key) { return value }
        if let text = try? decodeIfPresent(String.self, forKey: key) { return Double(text) }
        return nil
    }
}

import CFFmpeg
import Foundation
@testable import LivePush
import XCTest

/// AAC made with the ffmpeg CLI goes through ``AudioOpusTranscoder``; the Opus packets are
/// decoded back with libavcodec's own Opus decoder (which drops the OpusHead's pre-skip) and
/// checked for length, stamps and the tone.
final class MediaOpusTranscoderTests: XCTestCase {
    var files: MediaTestFiles!

    override func setUpWithError() throws {
        try XCTSkipUnless(MediaTestFiles.toolsAvailable, "ffmpeg/ffprobe not installed")
        files = try MediaTestFiles()
    }

    override func tearDown() {
        files = nil  // removes the temporary folder
    }

    /// A 4 s 300 Hz tone as raw AAC frames (ADTS stripped by the source), shifted to start at `offset` µs.
    func aacTone(rate: Int, channels: Int, offset: Int64) throws -> (AudioTrackInfo, [MediaPacket]) {
        let path = try files.make("tone-\(rate)-\(channels).aac", [
            "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=\(rate):duration=4",
            "-ac", "\(channels)", "-c:a", "aac", "-b:a", "96k", "-f", "adts",
        ])
        let source = try MediaInputFactory.open(path: path, options: .init())
        let track = try XCTUnwrap(source.info.audio)
        XCTAssertEqual(track.sampleRate, rate)
        XCTAssertEqual(track.channels, channels)
        var packets: [MediaPacket] = []
        while var packet = try source.nextPacket() {
            guard packet.kind == .audio else { continue }
            packet.pts += offset
            packet.dts += offset
            packets.append(packet)
        }
        XCTAssertGreaterThan(packets.count, 150)
        return (track, packets)
    }

    func transcodeAll(_ transcoder: AudioOpusTranscoder, _ input: [MediaPacket]) throws -> [MediaPacket] {
        var out: [MediaPacket] = []
        for packet in input { out += try transcoder.transcode(packet) }
        out += try transcoder.finish()
        return out
    }

    /// Input length in µs: AAC LC frames are 1024 samples each.
    func micros(ofFrames count: Int, rate: Int) -> Int64 { Int64(count) * 1024 * 1_000_000 / Int64(rate) }

    func checkTone(rate: Int, channels: Int) throws {
        let offset: Int64 = 3_000_000
        let (track, input) = try aacTone(rate: rate, channels: channels, offset: offset)
        let transcoder = try AudioOpusTranscoder(track: track)
        XCTAssertEqual(transcoder.format, AudioFormat(sampleRate: 48_000, channels: channels))
        XCTAssertEqual(transcoder.preSkip, 312)  // libopus's look-ahead at 48 kHz
        XCTAssertEqual(transcoder.opusHead[9], UInt8(channels))
        let opus = try transcodeAll(transcoder, input)

        let inputMicros = micros(ofFrames: input.count, rate: rate)
        XCTAssertEqual(Double(opus.count), Double(inputMicros) / 20_000, accuracy: 2, "\(opus.count) packets for \(inputMicros) µs")
        let start = try XCTUnwrap(input.first).pts
        XCTAssertEqual(opus.first?.pts, start)
        for (n, packet) in opus.enumerated() {
            XCTAssertEqual(packet.kind, .audio)
            XCTAssertEqual(packet.pts, start + Int64(n) * 20_000, "packet \(n)")
            XCTAssertEqual(packet.dts, packet.pts)
            XCTAssertEqual(packet.duration, 20_000)
            XCTAssertFalse(packet.data.isEmpty)
        }
        XCTAssertEqual(Set(opus.map(opusFrameMicros)), [20_000], "TOC says 20 ms, one frame")

        let decoded = try decodeOpus(opus, head: transcoder.opusHead, channels: channels)
        XCTAssertEqual(decoded.channels, channels)
        let decodedMicros = Int64(decoded.samples[0].count) * 1_000_000 / 48_000
        XCTAssertEqual(Double(decodedMicros), Double(inputMicros), accuracy: 40_000)
        for c in 0..<channels {
            // One second from the middle: 300 whole cycles, a tone alone gives 1.
            let window = Array(decoded.samples[c][72_000..<120_000])
            let tone = goertzelShare(window, frequency: 300)
            XCTAssertGreaterThan(tone, 0.95, "300 Hz share of channel \(c)")
            XCTAssertLessThan(goertzelShare(window, frequency: 440), 0.01)
            XCTAssertGreaterThan(rms(window), 0.05, "level of channel \(c)")  // sine's amplitude is 1/8: rms 0.088
        }
    }

    func testStereo48kHzToneComesThroughWithExactStamps() throws {
        try checkTone(rate: 48_000, channels: 2)
    }

    func testMono44100HzIsResampled() throws {
        try checkTone(rate: 44_100, channels: 1)
    }

    /// The repository's sample (AAC 44.1 kHz stereo, 440 Hz left and 660 Hz right, between video
    /// packets, starting at the priming's -23 ms): the channels stay apart and in order.
    func testRepositorySampleKeepsItsChannels() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Media/sample-h264-aac.mp4").path
        try XCTSkipUnless(FileManager.default.fileExists(atPath: path), "Media/sample-h264-aac.mp4 missing")
        let source = try MediaInputFactory.open(path: path, options: .init())
        let track = try XCTUnwrap(source.info.audio)
        var input: [MediaPacket] = []
        while let packet = try source.nextPacket() { if packet.kind == .audio { input.append(packet) } }
        XCTAssertEqual(input.count, 174)
        let transcoder = try AudioOpusTranscoder(track: track, bitrate: 96_000)
        let opus = try transcodeAll(transcoder, input)
        let start = input[0].pts
        XCTAssertEqual(opus.map(\.pts), (0..<opus.count).map { start + Int64($0) * 20_000 })
        XCTAssertEqual(Double(opus.count), Double(micros(ofFrames: 174, rate: 44_100)) / 20_000, accuracy: 2)
        let decoded = try decodeOpus(opus, head: transcoder.opusHead, channels: 2)
        XCTAssertEqual(decoded.channels, 2)
        // 440 and 660 Hz have whole cycles in 0.1 s: ten windows' worth from the middle.
        let left = Array(decoded.samples[0][72_000..<120_000]), right = Array(decoded.samples[1][72_000..<120_000])
        XCTAssertGreaterThan(goertzelShare(left, frequency: 440), 0.95)
        XCTAssertLessThan(goertzelShare(left, frequency: 660), 0.01)
        XCTAssertGreaterThan(goertzelShare(right, frequency: 660), 0.95)
        XCTAssertLessThan(goertzelShare(right, frequency: 440), 0.01)
    }

    func testGapRestartsTheMapping() throws {
        let (track, clean) = try aacTone(rate: 44_100, channels: 2, offset: 0)
        let jump: Int64 = 500_000
        let cut = 80
        var input = clean
        for i in cut..<input.count {
            input[i].pts += jump
            input[i].dts += jump
        }
        // Jitter of a few ms (FLV's whole milliseconds) is no gap.
        input[10].pts += 3_000
        let opus = try transcodeAll(try AudioOpusTranscoder(track: track), input)
        let start = input[0].pts
        let newStart = input[cut].pts
        let restart = try XCTUnwrap(opus.firstIndex { $0.pts >= newStart })
        XCTAssertEqual(opus[restart].pts, newStart, "the new segment starts at the packet after the gap")
        for n in 0..<restart {
            XCTAssertEqual(opus[n].pts, start + Int64(n) * 20_000, "old segment, packet \(n)")
        }
        XCTAssertLessThan(opus[restart - 1].pts + 20_000, newStart)
        // The old segment's tail is padded to a whole frame: it ends at most 20 ms after its input.
        XCTAssertEqual(Double(opus[restart - 1].pts + 20_000 - start), Double(micros(ofFrames: cut, rate: 44_100)), accuracy: 20_000)
        for n in restart..<opus.count {
            XCTAssertEqual(opus[n].pts, newStart + Int64(n - restart) * 20_000, "new segment, packet \(n)")
        }
        XCTAssertEqual(Double(opus.count), Double(micros(ofFrames: input.count, rate: 44_100)) / 20_000, accuracy: 3)
        // Nothing after finish.
        XCTAssertEqual(try AudioOpusTranscoder(track: track).finish().count, 0)
    }

    // MARK: - Helpers

    /// The duration a packet's TOC byte (RFC 6716 §3.1) gives, in µs, for code-0 packets (one frame).
    func opusFrameMicros(_ packet: MediaPacket) -> Int {
        guard let toc = packet.data.first, toc & 3 == 0 else { return -1 }
        let config = Int(toc >> 3)
        let silkOrHybrid = [10_000, 20_000, 40_000, 60_000]
        let celt = [2_500, 5_000, 10_000, 20_000]
        switch config {
        case 0..<12: return silkOrHybrid[config % 4]
        case 12..<16: return [10_000, 20_000][config % 2]
        default: return celt[config % 4]
        }
    }

    /// Decodes the packets with libavcodec's Opus decoder; planar float samples per channel.
    func decodeOpus(_ packets: [MediaPacket], head: [UInt8], channels: Int) throws -> (channels: Int, samples: [[Float]]) {
        let parameters = try XCTUnwrap(avcodec_parameters_alloc())
        var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
        defer { avcodec_parameters_free(&owned) }
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = AV_CODEC_ID_OPUS
        parameters.pointee.sample_rate = 48_000
        av_channel_layout_default(&parameters.pointee.ch_layout, Int32(channels))
        let extradata = try XCTUnwrap(av_mallocz(head.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))).assumingMemoryBound(to: UInt8.self)
        extradata.update(from: head, count: head.count)
        parameters.pointee.extradata = extradata
        parameters.pointee.extradata_size = Int32(head.count)
        let decoder = try FFDecoder(parameters: parameters, timeBase: FF.microsTimeBase)
        var packet = av_packet_alloc()
        defer { av_packet_free(&packet) }
        let pkt = try XCTUnwrap(packet)
        var samples: [[Float]] = Array(repeating: [], count: channels)
        var decodedChannels = 0
        func receive() throws {
            while try decoder.receive() {
                let frame = decoder.frame.pointee
                XCTAssertEqual(frame.format, AV_SAMPLE_FMT_FLTP.rawValue)
                XCTAssertEqual(frame.sample_rate, 48_000)
                decodedChannels = Int(frame.ch_layout.nb_channels)
                for c in 0..<min(channels, decodedChannels) {
                    let plane = UnsafeRawPointer(frame.extended_data[c]!).assumingMemoryBound(to: Float.self)
                    samples[c] += UnsafeBufferPointer(start: plane, count: Int(frame.nb_samples))
                }
            }
        }
        for media in packets {
            av_packet_unref(pkt)
            XCTAssertGreaterThanOrEqual(av_new_packet(pkt, Int32(media.data.count)), 0)
            media.data.withUnsafeBufferPointer { pkt.pointee.data.update(from: $0.baseAddress!, count: $0.count) }
            pkt.pointee.pts = media.pts
            pkt.pointee.dts = media.dts
            pkt.pointee.duration = media.duration
            try decoder.send(pkt)
            try receive()
        }
        try decoder.send(nil)
        try receive()
        return (decodedChannels, samples)
    }

    /// The share of the window's energy at `frequency` (48 kHz): 1 for that tone alone.
    func goertzelShare(_ x: [Float], frequency: Double) -> Double {
        let w = 2 * Double.pi * frequency / 48_000
        let coefficient = 2 * cos(w)
        var s1 = 0.0, s2 = 0.0
        for sample in x {
            let s0 = Double(sample) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let power = s1 * s1 + s2 * s2 - coefficient * s1 * s2  // |X(f)|²
        let energy = x.reduce(0.0) { $0 + Double($1) * Double($1) }
        return energy > 0 ? 2 * power / (Double(x.count) * energy) : 0
    }

    func rms(_ x: [Float]) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
    }
}

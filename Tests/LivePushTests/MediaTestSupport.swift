import Foundation
@testable import LivePush
import XCTest

/// Makes tiny media files with the ffmpeg CLI in a per-test temporary folder.
final class MediaTestFiles {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("livepush-media-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    static var toolsAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe")
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs a tool, returns its standard output; throws when it exits non-zero.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "MediaTestFiles", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "\(tool) \(arguments.joined(separator: " ")) failed"])
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// `ffmpeg -y <arguments> <name>` with lavfi test sources; returns the output path.
    func make(_ name: String, _ arguments: [String]) throws -> String {
        let output = path(name)
        try Self.run("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-y"] + arguments + [output])
        return output
    }

    static let video = ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=2,format=yuv420p"]
    static let audio = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2"]

    /// Packets of the first stream of `type` ("v" or "a") as ffprobe counts them.
    static func packetCount(_ path: String, _ type: String) throws -> Int {
        let out = try run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "\(type):0", "-count_packets",
                                               "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path])
        // MPEG-TS also prints a program section; take the first number.
        return out.split(whereSeparator: \.isNewline).lazy.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.first ?? -1
    }

    /// All packets of a source, in order.
    /// The source's packets on the output clock, as a push would send them.
    static func drain(_ source: any MediaInput, limit: Int = 100_000) throws -> [MediaPacket] {
        var packets: [MediaPacket] = []
        var clock = OutputClock(info: source.info)
        clock.beginSegment(start: source.start)
        while let p = try source.nextPacket() {
            packets.append(clock.stamp(p))
            if packets.count >= limit { break }
        }
        return packets
    }

    /// ``drain(_:limit:)`` and what the push does after the clock with the pictures a
    /// transcoded input yields: its one encode (``VideoEncodeStage``). Returns the coded
    /// packets and the tracks as the outputs announce them.
    static func drainEncoded(_ source: any MediaInput, stages: FrameStages = FrameStages()) throws -> (info: StreamInfo, packets: [MediaPacket]) {
        let encode = try PictureEncode(source, stages: stages)
        var packets: [MediaPacket] = []
        for packet in try drain(source) { packets += try encode.process(packet) }
        packets += try encode.finish()
        return (encode.info, packets)
    }
}

/// The push's encodes after the clock (``VideoEncodeStage``, ``AudioEncodeStage``) over one
/// input, as a test drives them.
final class PictureEncode {
    let info: StreamInfo
    let stage: VideoEncodeStage?
    let sound: AudioEncodeStage?

    /// `adaptive`: the push's adaptive bitrate follows this encode (``FrameStages/adaptBitrate(isPoor:now:)``).
    init(_ source: any MediaInput, stages: FrameStages = FrameStages(), adaptive: Bool = false) throws {
        var info = source.info
        if let settings = info.video?.pictureSettings {
            let stage = try VideoEncodeStage(settings: settings, stages: stages, main: true, adaptive: adaptive, keepsPictures: false)
            info.video = stage.trackInfo
            self.stage = stage
        } else {
            stage = nil
        }
        if let audio = info.audio, audio.yieldsRawSound {
            let sound = try AudioEncodeStage(format: AudioFormat(sampleRate: audio.sampleRate, channels: audio.channels),
                                             bitrate: audio.bitrate, mixer: nil, main: true)
            info.audio = sound.trackInfo
            self.sound = sound
        } else {
            sound = nil
        }
        self.info = info
    }

    /// What delivery gets for `packet`: its encode (a picture, raw sound), or the packet itself.
    func process(_ packet: MediaPacket) throws -> [MediaPacket] {
        var out: [MediaPacket] = []
        if let stage, packet.kind == .video {
            try stage.process(packet) { (coded: MediaPacket) throws(LivePushError) in out.append(coded) }
        } else if let sound, packet.kind == .audio {
            try sound.process(packet) { (coded: MediaPacket) throws(LivePushError) in out.append(coded) }
        } else {
            out.append(packet)
        }
        return out
    }

    func finish() throws -> [MediaPacket] {
        var out: [MediaPacket] = []
        try stage?.finish { (coded: MediaPacket) throws(LivePushError) in out.append(coded) }
        try sound?.finish { (coded: MediaPacket) throws(LivePushError) in out.append(coded) }
        return out
    }
}

/// Checks the output contract shared by copy and transcode paths.
func assertMediaContract(_ packets: [MediaPacket], file: StaticString = #filePath, line: UInt = #line) {
    var lastDts: [MediaPacket.Kind: Int64] = [:]
    for p in packets {
        XCTAssertGreaterThanOrEqual(p.pts, p.dts, "pts < dts", file: file, line: line)
        XCTAssertGreaterThanOrEqual(p.dts, 0, "negative dts", file: file, line: line)
        if let last = lastDts[p.kind] {
            XCTAssertGreaterThanOrEqual(p.dts, last, "dts not monotonic", file: file, line: line)
        }
        lastDts[p.kind] = p.dts
        XCTAssertFalse(p.data.isEmpty, "empty payload", file: file, line: line)
        if p.kind == .video {
            XCTAssertTrue(isAVCC(p.data), "video packet is not AVCC", file: file, line: line)
        } else {
            XCTAssertEqual(p.importance, .key, file: file, line: line)
            XCTAssertNil(ADTSHeader(p.data), "audio packet still has an ADTS header", file: file, line: line)
        }
    }
    XCTAssertEqual(packets.map(\.dts).min(), 0, "first dts is not 0", file: file, line: line)
}

/// Whether `data` is a well-formed sequence of 4-byte length-prefixed NAL units.
func isAVCC(_ data: [UInt8]) -> Bool {
    // (A 4-byte length of 256...511 begins with 00 00 01, so no start-code check here.)
    data.withUnsafeBufferPointer { AVCCFormat.summarize($0, lengthSize: 4) } != nil
}

/// A second pass after `rewind()` must replay the same media starting at 0 again. Seeking may
/// skip packets that precede the start (e.g. AAC priming in MP4, or a decoder's start padding
/// when transcoding), so audio may differ by a packet or two and the offset may shift.
func assertSameReplay(_ first: [MediaPacket], _ second: [MediaPacket], _ message: String = "",
                      file: StaticString = #filePath, line: UInt = #line) {
    func relative(_ packets: [MediaPacket], _ kind: MediaPacket.Kind) -> [Int64] {
        let dts = packets.filter { $0.kind == kind }.map(\.dts)
        return dts.map { $0 - (dts.first ?? 0) }
    }
    XCTAssertEqual(second.map(\.dts).min(), 0, message, file: file, line: line)
    XCTAssertEqual(relative(first, .video), relative(second, .video), message, file: file, line: line)
    let audio = (first.filter { $0.kind == .audio }.count, second.filter { $0.kind == .audio }.count)
    XCTAssertLessThanOrEqual(abs(audio.0 - audio.1), 2, message, file: file, line: line)
    XCTAssertEqual(second.first { $0.kind == .video }?.importance ?? .key, .key, message, file: file, line: line)
}

extension MediaTestFiles {
    /// Writes the video packets as an Annex B elementary stream (SPS/PPS from the avcC first)
    /// and the audio packets as ADTS, then lets ffprobe decode them: returns the number of
    /// frames each decodes without error (-1 when a stream is absent).
    func decodedFrameCounts(_ info: StreamInfo, _ packets: [MediaPacket]) throws -> (video: Int, audio: Int) {
        var video = -1, audio = -1
        if let v = info.video, let config = AVCCFormat.parseDecoderConfiguration(v.decoderConfiguration) {
            var stream: [UInt8] = []
            for unit in config.sps + config.pps { stream += [0, 0, 0, 1] + unit }
            for p in packets where p.kind == .video {
                p.data.withUnsafeBufferPointer { buf in
                    _ = AVCCFormat.forEachNALUnit(in: buf, lengthSize: 4) { stream += [0, 0, 0, 1] + Array(buf[$0]) }
                }
            }
            let file = path("check.h264")
            try Data(stream).write(to: URL(fileURLWithPath: file))
            video = try Self.frameCount(file)
        }
        if let a = info.audio, a.audioSpecificConfig.count >= 2 {
            let asc = a.audioSpecificConfig
            let objectType = Int(asc[0] >> 3), sfi = Int((asc[0] & 7) << 1 | asc[1] >> 7), channels = Int((asc[1] >> 3) & 0xF)
            var stream: [UInt8] = []
            for p in packets where p.kind == .audio {
                let length = p.data.count + 7
                stream += [0xFF, 0xF1, UInt8((objectType - 1) << 6 | sfi << 2 | channels >> 2),
                           UInt8((channels & 3) << 6 | length >> 11), UInt8((length >> 3) & 0xFF),
                           UInt8((length & 7) << 5 | 0x1F), 0xFC] + p.data
            }
            let file = path("check.aac")
            try Data(stream).write(to: URL(fileURLWithPath: file))
            audio = try Self.frameCount(file)
        }
        return (video, audio)
    }

    static func frameCount(_ file: String) throws -> Int {
        let out = try run("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-select_streams", "0",
                                               "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", file])
        return out.split(whereSeparator: \.isNewline).lazy.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.first ?? -1
    }
}

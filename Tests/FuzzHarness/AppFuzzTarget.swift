import Foundation
@testable import LivePush
@testable import LivePushLoopback
import LivePushWire
import NIOCore
import NIOEmbedded

/// The readers above the wire formats, each driven the way a peer or a caller drives it: the
/// receiver's whole session (handshake, chunk stream, commands, recording), the publish
/// recorder, and the JSON readers of schedules, clips and channel configurations.
///
/// Compiled twice, as ``FuzzTarget`` is: into the unit tests, which replay the kept corpus
/// (Tests/Fuzz/Corpus/<rawValue>), and into the libFuzzer binary that scripts/fuzz-app.sh builds
/// with SwiftPM (Tests/FuzzHarness, whose entry picks the target from LIVEPUSH_FUZZ_TARGET).
enum AppFuzzTarget: String, CaseIterable, Sendable, FuzzCheck {
    /// Bytes from a client through the receiver's pipeline (after a handshake when the first byte is even).
    case receiverSession = "receiver-session"
    /// Media and data messages into a PublishRecorder, then its recording read back.
    case recorder
    /// A schedule, a clip (a control API body) and a blackout option.
    case schedule
    /// A channels configuration, a channel object (a control API body), and a control request's headers.
    case channelsConfig = "channels-config"
    /// A WHIP endpoint's response to the offer: status line, fields, `Link`, `Location` (AppFuzzTarget+WHIP).
    case whipResponse = "whip-response"
    /// A WHIP endpoint's SDP answer (AppFuzzTarget+WHIP).
    case sdpAnswer = "sdp-answer"
    /// An HLS origin's playlist, as the HLS input reads it (AppFuzzTarget+HLS).
    case hlsPlaylist = "hls-playlist"

    /// Runs the reader over `bytes`; the property it broke, or nil.
    func check(_ bytes: [UInt8]) -> String? {
        switch self {
        case .receiverSession: return Self.checkReceiverSession(bytes)
        case .recorder: return Self.checkRecorder(bytes)
        case .schedule: return Self.checkSchedule(bytes)
        case .channelsConfig: return Self.checkChannelsConfig(bytes)
        case .whipResponse: return Self.checkWHIPResponse(bytes)
        case .sdpAnswer: return Self.checkSDPAnswer(bytes)
        case .hlsPlaylist: return Self.checkHLSPlaylist(bytes)
        }
    }

    /// A directory of its own per process, emptied after each input.
    static let scratch: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("livepush-fuzz-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    static func emptyScratch() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? [] {
            try? FileManager.default.removeItem(atPath: scratch + "/" + name)
        }
    }

    // MARK: Receiver session

    /// No crash; at most a few kilobytes out per byte in (no amplification); every file written
    /// lies directly in the record directory.
    static func checkReceiverSession(_ bytes: [UInt8]) -> String? {
        defer { emptyScratch() }
        var input = bytes
        if let first = bytes.first, first % 2 == 0 {
            input = [3] + [UInt8](repeating: 1, count: 1536) + [UInt8](repeating: 2, count: 1536) + bytes.dropFirst()
        }
        let core = ReceiverCore()
        var limits = RTMPReceiver.Limits()
        limits.maxChunkStreamBytes = 1 << 20
        let configuration = RTMPReceiver.Configuration(recordDirectory: scratch, limits: limits)
        let channel = EmbeddedChannel()
        // Runs the loop's last tasks (the handlers' removal): without them the pipeline and the
        // channel hold each other for good.
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        do {
            try ReceiverPipeline.add(to: channel.pipeline.syncOperations, core: core, configuration: configuration)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1935)).wait()
            // In pieces, as a socket delivers them.
            var offset = 0
            while offset < input.count, channel.isActive {
                let end = min(input.count, offset + 4096)
                try channel.writeInbound(channel.allocator.buffer(bytes: input[offset..<end]))
                offset = end
            }
        } catch {
            // A refused input closes the connection: fine.
        }
        var written = 0
        while let buffer = try? channel.readOutbound(as: ByteBuffer.self) { written += buffer.readableBytes }
        if written > 8192 + 16 * input.count { return "\(written) bytes out for \(input.count) in" }
        _ = try? channel.finish(acceptAlreadyClosed: true)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: scratch)) ?? [] {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: scratch + "/" + name, isDirectory: &isDirectory), isDirectory.boolValue {
                return "a directory was made in the record directory: \(name)"
            }
        }
        return nil
    }

    // MARK: Recorder

    /// Messages framed as [type][timestamp: 4][length: 2][payload]. Every audio, video and data
    /// message is a tag of the recording, read back whole.
    static func checkRecorder(_ bytes: [UInt8]) -> String? {
        defer { emptyScratch() }
        var messages: [RTMPMessage] = []
        var p = 0
        while p + 7 <= bytes.count {
            let type = [8, 9, 18, 15, 20][Int(bytes[p]) % 5]
            let timestamp = bytes[(p + 1)..<(p + 5)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let length = min(Int(bytes[p + 5]) << 8 | Int(bytes[p + 6]), bytes.count - p - 7)
            messages.append(RTMPMessage(typeID: UInt8(type), streamID: 1, timestamp: timestamp, chunkStreamID: 4,
                                        payload: Array(bytes[(p + 7)..<(p + 7 + length)])))
            p += 7 + length
        }
        let path = scratch + "/fuzz.flv"
        guard let recorder = try? PublishRecorder(publishID: 1, app: "a", stream: "s", remote: "r", recordingPath: path) else {
            return "the recording could not be created"
        }
        for message in messages { recorder.record(message) }
        let summary = recorder.finish(reason: "fuzz")
        guard let recorded = summary.recordingPath, let data = FileManager.default.contents(atPath: recorded) else {
            return "no recording"
        }
        guard let tags = try? FLVFileReader.tags(in: [UInt8](data)) else { return "the recording does not read back" }
        let kept = messages.filter { $0.typeID != 20 }
        if tags.count != kept.count { return "\(kept.count) messages, \(tags.count) tags" }
        for (tag, message) in zip(tags, kept) where message.typeID == 8 || message.typeID == 9 {
            if tag.body != message.payload || tag.timestampMs != message.timestamp { return "a tag differs from its message" }
        }
        return nil
    }

    // MARK: Schedules and clips

    /// No crash; whatever is accepted has every time finite and within ``PlayoutSchedule/maxSeconds``.
    static func checkSchedule(_ bytes: [UInt8]) -> String? {
        let data = Data(bytes)
        if let schedule = try? PlayoutSchedule(json: data, relativeTo: "/media") {
            var times: [Double] = schedule.content.flatMap { [$0.inPoint, $0.outPoint] }
            for ad in schedule.ads { times += [ad.clip.inPoint, ad.clip.outPoint, ad.at ?? 0] }
            if let bad = times.first(where: { !PlayoutSchedule.isTime($0) }) {
                return "an accepted schedule holds the time \(bad)"
            }
        }
        if let clip = try? PlayoutSchedule.Clip(json: data, relativeTo: "/media"),
           !(clip.inPoint >= 0 && clip.outPoint <= PlayoutSchedule.maxSeconds && clip.inPoint < clip.outPoint) {
            return "an accepted clip runs from \(clip.inPoint) to \(clip.outPoint)"
        }
        if let text = String(bytes: bytes, encoding: .utf8) { _ = try? BlackoutWindow(parsing: text) }
        return nil
    }

    // MARK: Channel configurations and requests

    /// No crash; whatever is accepted has every path inside the media root.
    static func checkChannelsConfig(_ bytes: [UInt8]) -> String? {
        defer { emptyScratch() }
        _ = FileManager.default.createFile(atPath: scratch + "/show.mp4", contents: Data("x".utf8))
        guard let root = try? MediaRoot(scratch) else { return "no media root" }
        if let config = try? ChannelsConfig(json: Data(bytes), relativeTo: scratch) {
            let paths = config.channels.flatMap { channel -> [String] in
                var paths = [channel.record, channel.alternate, channel.liveInput.backup].compactMap { $0 }
                switch channel.source {
                case .file(let path, _): paths.append(path)
                case .playout(let path): paths.append(path)
                case .live: break  // a URL, not a path
                }
                return paths
            }
            let inside = (config.mediaRoot ?? root).path
            if let outside = paths.first(where: { !$0.hasPrefix(inside + "/") }) { return "\(outside) is outside \(inside)" }
        }
        if let text = String(bytes: bytes, encoding: .utf8) {
            let parts = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            _ = ControlAccessPolicy(host: "127.0.0.1", port: 8089).verdict(
                method: "POST", authority: parts.first, origin: parts.count > 1 ? parts[1] : nil,
                contentType: parts.count > 2 ? parts[2] : nil, hasBody: true)
        }
        return nil
    }
}

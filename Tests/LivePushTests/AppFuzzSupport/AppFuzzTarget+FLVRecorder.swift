import Foundation
@testable import LivePush
import LivePushWire

/// The recorder target's second half: the pusher's ``FLVRecorder`` (a `--record` output), fed
/// the fuzzed messages as the packets a push hands it.
extension AppFuzzTarget {
    /// Audio, video, data and cue packets, and a sequence header for each command message
    /// (type 20, which the receiver's recorder skips). The recording must read back as the
    /// header tags (metadata, then the tracks' sequence headers), then one tag per packet
    /// carrying its bytes at its time.
    ///
    /// The stamps stay within what the push's output clock makes (microseconds from 0, under
    /// 2^32 ms; presentation at most a few hundred ms from decoding): the recorder's input is
    /// that clock's, never a peer's.
    static func checkFLVRecorder(_ messages: [RTMPMessage], flags: UInt8) -> String? {
        let video = flags & 1 == 0 ? nil : VideoTrackInfo(width: 1280, height: 720, frameRate: 25, bitrate: 0,
                                                           decoderConfiguration: [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 0])
        let audio = flags & 2 == 0 ? nil : AudioTrackInfo(sampleRate: [44_100, 48_000, 22_050, 8_000][Int(flags >> 2) % 4],
                                                           channels: Int(flags >> 4) % 3, bitrate: 0,
                                                           audioSpecificConfig: [0x12, 0x10])
        let packets = messages.map(packet(for:))
        let path = scratch + "/record.flv"
        // The writer thread outlives finish() by a moment; libFuzzer's leak check during its exit
        // reported the thread's Foundation object (never on a replay, never once threads end).
        defer { waitForRecorderThreads() }
        let recorder: FLVRecorder
        do {
            recorder = try FLVRecorder(path: path, info: StreamInfo(video: video, audio: audio, duration: 0), waitsWhenFull: true,
                                       keepsExisting: flags & 0x80 != 0, onFailure: { _ in })
        } catch {
            return "the recording could not be created: \(error)"
        }
        for packet in packets { recorder.offer(packet) }
        recorder.finish()
        if recorder.figures.dropped != 0 { return "\(recorder.figures.dropped) packets dropped by a recorder that waits" }
        guard recorder.path == path, let data = FileManager.default.contents(atPath: path) else { return "no recording at \(path)" }
        guard let tags = try? FLVFileReader.tags(in: [UInt8](data)) else { return "the recording does not read back" }
        let headerTags = 1 + (video == nil ? 0 : 1) + (audio == nil ? 0 : 1)
        guard tags.count == headerTags + packets.count else {
            return "\(packets.count) packets, \(tags.count) tags (\(headerTags) for the header)"
        }
        for (tag, packet) in zip(tags.dropFirst(headerTags), packets) {
            let (type, bodyHeader): (FLVTagType, Int) = switch packet.kind {
            case .video: (.video, 5)
            case .audio: (.audio, 2)
            case .data, .cue: (.script, 0)
            }
            if tag.type != type || tag.timestampMs != UInt32(packet.dts / 1000) || Array(tag.body.dropFirst(bodyHeader)) != packet.data {
                return "a tag differs from its packet (\(packet.kind) at \(packet.dts) µs)"
            }
        }
        return nil
    }

    /// Up to a second for every `livepush.record` thread to end.
    private static func waitForRecorderThreads() {
        func recording() -> Bool {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.contains { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.hasPrefix("livepush.record") == true
            }
        }
        var waits = 0
        while recording(), waits < 10_000 {
            usleep(100)
            waits += 1
        }
    }

    /// 8 audio, 9 video, 18 data, 15 a cue, 20 a sequence header (video or audio by the stamp's
    /// lowest bit); the stamp's low bits give the frame's importance and its composition offset.
    private static func packet(for message: RTMPMessage) -> MediaPacket {
        let dts = Int64(message.timestamp) * 1000
        let pts = dts + Int64(message.timestamp & 0xFF) * 2000 - 100_000
        let importance: MediaPacket.Importance = [.disposable, .reference, .key, .key][Int(message.timestamp >> 8) % 4]
        switch message.typeID {
        case 8: return MediaPacket(kind: .audio, data: message.payload, dts: dts, pts: dts, importance: .key)
        case 9: return MediaPacket(kind: .video, data: message.payload, dts: dts, pts: pts, importance: importance)
        case 18: return MediaPacket(kind: .data, data: message.payload, dts: dts, pts: dts, importance: .key)
        case 15: return MediaPacket(kind: .cue, data: message.payload, dts: dts, pts: dts, importance: .key)
        default:
            return MediaPacket.sequenceHeader(message.timestamp & 1 == 0 ? .video : .audio, configuration: message.payload, at: dts)
        }
    }
}

import LivePushWire
#if canImport(Glibc)
import Glibc
#endif

/// Accounts for (and optionally records) the media of one publish.
/// Audio, video and data messages go in with ``record(_:)``; ``finish(reason:)`` closes the
/// recording and returns the summary.
///
/// Every publish records into a file of its own (`NAME.flv.part-ID`) that is renamed when it
/// ends: to `NAME.flv` if it is the newest publish of that name, else to `NAME-ID.flv`, and to
/// the next free name (`NAME-ID-2.flv`, …) when that one exists (``RecordingClaim``). So no
/// publish, stale or hostile, can truncate or replace any recording.
///
/// What the peer sends beyond media (its `fourCcList`, `onMetaData`) is kept only within
/// ``PeerValueCaps``; what goes past them is counted and reported through ``onLimit``.
final class PublishRecorder {
    let publishID: Int
    let app: String
    let stream: String
    let remote: String
    private var sink: FLVFileSink?
    private(set) var recordingPath: String?
    /// Whether this is still the newest publish of its stream name (asked when it ends).
    private let isNewest: () -> Bool

    private var videoFrames = 0
    private var videoKeyframes = 0
    private var firstVideoFrameIsKeyframe: Bool?
    private var sequenceHeaders = 0
    private var audioFrames = 0
    private var dataMessages = 0
    private var bytes = 0
    private var firstTimestamp: Int?
    private var lastTimestamp: Int?
    private var lastVideoTimestamp: UInt32?
    private var lastAudioTimestamp: UInt32?
    private var monotonic = true
    private var metadata: [AMF0Property] = []

    /// Called with a description when writing the recording fails (recording then stops).
    var onRecordingError: ((String) -> Void)?
    /// Called when a peer's value reached a cap (at most once per publish and limit).
    var onLimit: ((ReceiverLimit) -> Void)?
    private var limitsReported: Set<ReceiverLimit> = []
    private let caps: PeerValueCaps
    private let maxMetadataMessageBytes: Int
    /// Entries and properties dropped to stay within ``caps``.
    private var droppedPeerValues: Int

    /// What the connect command announced (Enhanced RTMP's `fourCcList`).
    private let announcedFourCcList: [String]?
    private var videoFourCC: String?

    init(
        publishID: Int, app: String, stream: String, remote: String, recordingPath: String?,
        announcedFourCcList: [String]? = nil, droppedFourCCs: Int = 0,
        caps: PeerValueCaps = PeerValueCaps(), maxMetadataMessageBytes: Int = RTMPReceiver.Limits().maxMetadataMessageBytes,
        isNewest: @escaping () -> Bool = { true }
    ) throws {
        self.announcedFourCcList = announcedFourCcList
        self.droppedPeerValues = droppedFourCCs
        self.caps = caps
        self.maxMetadataMessageBytes = maxMetadataMessageBytes
        self.isNewest = isNewest
        self.publishID = publishID
        self.app = app
        self.stream = stream
        self.remote = remote
        if let recordingPath {
            sink = try Self.createPart(of: recordingPath, publishID: publishID)
            self.recordingPath = recordingPath
        }
    }

    /// A new part file, never one that exists (an earlier run's part, or a file someone put
    /// there): `NAME.flv.part-ID`, else `NAME.flv.part-ID-2` and on.
    private static func createPart(of recordingPath: String, publishID: Int) throws -> FLVFileSink {
        var attempt = 1
        while true {
            let path = "\(recordingPath).part-\(publishID)" + (attempt == 1 ? "" : "-\(attempt)")
            do {
                return try FLVFileSink(path: path, createNew: true)
            } catch let error as FLVFileSink.WriteError where error.code == EEXIST && attempt < 100 {
                attempt += 1
            }
        }
    }

    static let setDataFramePrefix: [UInt8] = AMF0.encode([.string("@setDataFrame")])

    func record(_ message: RTMPMessage) {
        switch message.type {
        case .video:
            recordVideo(message)
            write(.video, message.timestamp, message.payload[...])
        case .audio:
            recordAudio(message)
            write(.audio, message.timestamp, message.payload[...])
        case .dataAMF0, .dataAMF3:
            var body = message.payload[...]
            if message.type == .dataAMF3, body.first == 0 { body = body.dropFirst() }
            if body.starts(with: Self.setDataFramePrefix) { body = body.dropFirst(Self.setDataFramePrefix.count) }
            dataMessages += 1
            bytes += message.payload.count
            noteMetadata(body)
            write(.script, message.timestamp, body)
        default:
            break
        }
    }

    /// Keeps what a summary needs of an `onMetaData`: read only when it is small, cut to ``caps``.
    private func noteMetadata(_ body: ArraySlice<UInt8>) {
        guard body.count <= maxMetadataMessageBytes else {
            // Reading it would cost a multiple of its size (a 16 MiB message of tiny properties).
            if body.starts(with: Self.onMetaDataPrefix) { report(.metadataTooLarge) }
            return
        }
        // One that does not decode is still recorded as it came; the summary just has no metadata.
        guard let values = try? AMF0.decode(body), values.first == .string("onMetaData"),
              let properties = values.dropFirst().first?.properties else { return }
        let trimmed = caps.metadata(properties)
        metadata = trimmed.kept
        if trimmed.dropped > 0 {
            droppedPeerValues += trimmed.dropped
            report(.peerValuesTrimmed)
        }
    }

    static let onMetaDataPrefix: [UInt8] = AMF0.encode([.string("onMetaData")])

    private func report(_ limit: ReceiverLimit) {
        guard limitsReported.insert(limit).inserted else { return }
        onLimit?(limit)
    }

    private func noteTimestamp(_ ts: UInt32, last: inout UInt32?) {
        if let previous = last, ts < previous { monotonic = false }
        last = ts
        let t = Int(ts)
        firstTimestamp = min(firstTimestamp ?? t, t)
        lastTimestamp = max(lastTimestamp ?? t, t)
    }

    private func recordVideo(_ message: RTMPMessage) {
        let p = message.payload
        bytes += p.count
        guard let b0 = p.first else { return }
        let isExHeader = b0 & 0x80 != 0
        let frameType = isExHeader ? (b0 >> 4) & 0x07 : b0 >> 4
        // E-RTMP v2 multitrack tags (PacketType 6: another track than 0, or ManyTracks) are
        // counted in bytes only: this receiver reports track 0, sent as an ordinary tag.
        if isExHeader && b0 & 0x0F == 6 { return }
        if videoFourCC == nil {
            if isExHeader, p.count >= 5 {
                videoFourCC = String(decoding: p[p.index(p.startIndex, offsetBy: 1)..<p.index(p.startIndex, offsetBy: 5)], as: UTF8.self)
            } else if !isExHeader, b0 & 0x0F == 7 {
                videoFourCC = "avc1"
            }
        }
        let isFrame: Bool
        if frameType == 5 {
            isFrame = false  // video info / command frame
        } else if isExHeader {
            let packetType = b0 & 0x0F
            if packetType == 0 { sequenceHeaders += 1 }
            isFrame = packetType == 1 || packetType == 3
        } else if b0 & 0x0F == 7 || b0 & 0x0F == 12 || b0 & 0x0F == 13 {  // AVC, HEVC (ext), AV1 (ext)
            guard p.count >= 2 else { return }
            if p[1] == 0 { sequenceHeaders += 1 }
            isFrame = p[1] == 1
        } else {
            isFrame = true
        }
        guard isFrame else { return }
        noteTimestamp(message.timestamp, last: &lastVideoTimestamp)
        videoFrames += 1
        let key = frameType == 1
        if key { videoKeyframes += 1 }
        if firstVideoFrameIsKeyframe == nil { firstVideoFrameIsKeyframe = key }
    }

    private func recordAudio(_ message: RTMPMessage) {
        let p = message.payload
        bytes += p.count
        guard let b0 = p.first else { return }
        if b0 >> 4 == 10 {  // AAC
            guard p.count >= 2 else { return }
            if p[1] == 0 { sequenceHeaders += 1; return }
        } else if p.count < 2 {
            return
        }
        noteTimestamp(message.timestamp, last: &lastAudioTimestamp)
        audioFrames += 1
    }

    /// Moves the finished recording to a final name no file has; the part's path if that fails.
    private func settle(_ partPath: String) -> String? {
        guard let final = recordingPath else { return nil }
        let candidates = RecordingClaim.candidates(for: final, publishID: publishID, isNewest: isNewest())
        switch RecordingClaim.claim(partPath, candidates: candidates) {
        case .claimed(let target):
            return target
        case .failed(let error):
            onRecordingError?("naming \(partPath) failed (\(candidates.count) names tried): errno \(error)")
            return partPath
        }
    }

    private func write(_ type: FLVTagType, _ timestamp: UInt32, _ body: ArraySlice<UInt8>) {
        guard let sink else { return }
        do {
            try sink.write(type: type, timestampMs: timestamp, body: body)
        } catch {
            self.sink = nil
            try? sink.close()
            onRecordingError?("recording \(sink.path) failed: \(error)")
        }
    }

    /// Closes the recording and returns the summary.
    func finish(reason: String) -> PublishSummary {
        if let sink {
            do { try sink.close() } catch { onRecordingError?("closing \(sink.path) failed: \(error)") }
            self.sink = nil
            recordingPath = settle(sink.path)
        }
        return PublishSummary(
            publishID: publishID, app: app, stream: stream, remote: remote,
            videoFrames: videoFrames, videoKeyframes: videoKeyframes,
            firstVideoFrameIsKeyframe: firstVideoFrameIsKeyframe, sequenceHeaders: sequenceHeaders,
            audioFrames: audioFrames, dataMessages: dataMessages, bytes: bytes,
            firstTimestampMs: firstTimestamp, lastTimestampMs: lastTimestamp,
            recordingPath: recordingPath, metadata: metadata, monotonic: monotonic, videoFourCC: videoFourCC,
            announcedFourCcList: announcedFourCcList, droppedPeerValues: droppedPeerValues, endReason: reason)
    }
}

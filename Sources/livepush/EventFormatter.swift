import LivePush

/// Renders pusher events as human lines or JSON objects.
enum EventFormatter {
    static func json(_ event: PushEvent, at elapsed: Duration) -> String {
        JSONValue.object(fields(event, at: elapsed)).encoded
    }

    private static func fields(_ event: PushEvent, at elapsed: Duration) -> [(String, JSONValue)] {
        if case .output(let id, let url, let inner) = event {
            // The destination's own event, tagged: {"event":"connectionLost","output":1,"outputURL":...}.
            var fields = fields(inner, at: elapsed)
            fields.insert(contentsOf: [("output", .int(Int64(id))), ("outputURL", .string(url))], at: 2)
            return fields
        }
        var fields: [(String, JSONValue)] = [
            ("event", .string(event.name)),
            ("group", .string(event.group.rawValue)),
            ("t", .double(seconds(elapsed))),
        ]
        switch event {
        case .pushStarted(let url), .pushURLAuthenticationOverdue(let url):
            fields.append(("url", .string(url)))
        case .stats(let stats), .stopped(let stats):
            fields.append(("stats", json(stats)))
        case .stateChanged(let state):
            fields.append(("state", .string(state.description)))
        case .reconnectStarted(let attempt):
            fields.append(("attempt", .int(Int64(attempt))))
        case .retryScheduled(let attempt, let delay, _):
            fields.append(("attempt", .int(Int64(attempt))))
            fields.append(("retryIn", .double(seconds(delay))))
        case .staleSession(let attempt, let waited, let retryIn):
            fields.append(("attempt", .int(Int64(attempt))))
            fields.append(("waited", .double(seconds(waited))))
            fields.append(("retryIn", .double(seconds(retryIn))))
        case .videoBitrateChanged(let from, let to):
            fields.append(("fromKbps", .int(Int64(from))))
            fields.append(("toKbps", .int(Int64(to))))
        case .reconnectRequested(let url, let description):
            fields.append(("url", .string(url)))
            if let description { fields.append(("description", .string(description))) }
        case .cueMoved(let from, let to):
            fields.append(("from", .double(seconds(from))))
            fields.append(("to", .double(seconds(to))))
        case .serverCapabilities(let c):
            fields.append(("videoFourCCs", .array(c.videoFourCCs.map { .string($0) })))
            fields.append(("audioFourCCs", .array(c.audioFourCCs.map { .string($0) })))
            fields.append(("capsEx", c.capsEx.map { .int(Int64($0)) } ?? .null))
            fields.append(("multitrack", .bool(c.acceptsMultitrack)))
            fields.append(("reconnect", .bool(c.acceptsReconnectRequest)))
        case .bgmProgress(let position, let duration):
            fields.append(("position", .double(seconds(position))))
            fields.append(("duration", .double(seconds(duration))))
        case .filterCreated(let name), .filterDestroyed(let name), .filterFailed(let name, _):
            fields.append(("filter", .string(name)))
        case .playout(.entryStarted(let entry)), .playout(.entryEnded(let entry)), .playout(.entryFailed(let entry, _)):
            fields.append(("entry", json(entry)))
        case .playout(.adBreakStarted(let name)), .playout(.adBreakEnded(let name)):
            fields.append(("break", .string(name)))
        case .playout(.aired(let record)):
            fields.append(("asRun", .raw(record.jsonLine)))
        case .playout(.channelStarted(let start)):
            fields.append(("start", .double(start.timeIntervalSince1970)))
        case .input(.switched(let source)):
            fields.append(("source", .string(source.rawValue)))
        case .networkQualityChanged(let quality):
            fields.append(("quality", .string(quality.rawValue)))
        case .connectionStatusChanged(let status):
            fields.append(("status", .string(status.rawValue)))
        case .input(.primaryRetry(_, let retryIn)):
            fields.append(("retryIn", .double(seconds(retryIn))))
        case .breaks(.cueReceived(let cue)):
            fields.append(("cue", .object([("id", cue.eventID.map { .int(Int64($0)) } ?? .null), ("out", .bool(cue.opensBreak)),
                                           ("spliceTime", .double(Double(cue.spliceTime) / 1e6))])))
        case .breaks(let inner):
            if let o = inner.opportunity { fields.append(("opportunity", json(o))) }
            if case .breakStarted(_, let fill) = inner { fields.append(("fill", .string(fill))) }
            if case .opportunityResolved(_, let ads) = inner { fields.append(("ads", .int(Int64(ads)))) }
        default:
            break
        }
        if let error = event.error {
            fields.append(("error", json(error)))
        }
        return fields
    }

    static func json(_ o: PlacementOpportunity) -> JSONValue {
        .object([("id", .int(Int64(o.id))), ("kind", .string(o.kind.rawValue)), ("start", .double(Double(o.start) / 1e6)),
                 ("duration", o.duration.map { .double(Double($0) / 1e6) } ?? .null)])
    }

    static func json(_ error: LivePushError) -> JSONValue {
        .object([
            ("code", .int(Int64(error.code.rawValue))),
            ("hex", .string(error.code.hex)),
            ("name", .string(error.code.name)),
            ("message", .string(error.message)),
        ])
    }

    static func json(_ entry: PlayoutEntry) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("id", .string(entry.id)), ("kind", .string(entry.kind.rawValue)), ("source", .string(entry.source)),
            ("in", .double(entry.inPoint)), ("out", .double(entry.outPoint)),
        ]
        if let name = entry.adBreak { fields.append(("break", .string(name))) }
        return .object(fields)
    }

    static func json(_ s: PushStats) -> JSONValue {
        var fields = summaryFields(s)
        if !s.outputs.isEmpty {
            fields.append(("outputs", .array(s.outputs.map(json))))
        }
        if !s.renditions.isEmpty {
            fields.append(("renditionFramesDecoded", .int(Int64(s.renditionFramesDecoded))))
            fields.append(("renditionFramesFromInput", .int(Int64(s.renditionFramesFromInput))))
            if s.renditionPacketsSkipped > 0 { fields.append(("renditionPacketsSkipped", .int(Int64(s.renditionPacketsSkipped)))) }
            fields.append(("renditions", .array(s.renditions.map(json))))
        }
        if s.opusFramesEncoded > 0 {
            fields.append(("opusFramesEncoded", .int(Int64(s.opusFramesEncoded))))
        }
        if let loudness = s.loudness {
            fields.append(("loudness", json(loudness)))
        }
        if s.recordedBytes > 0 {
            fields.append(("recording", .object([("bytes", .int(s.recordedBytes)), ("drops", .int(Int64(s.recordingDrops)))])))
        }
        return .object(fields)
    }

    /// LUFS and dB to 0.1 (what a meter shows); null where there is nothing to measure yet.
    static func json(_ l: LoudnessStats) -> JSONValue {
        func tenth(_ value: Double?) -> JSONValue { value.map { .double(($0 * 10).rounded() / 10) } ?? .null }
        return .object([("target", tenth(l.target)), ("momentary", tenth(l.momentary)), ("shortTerm", tenth(l.shortTerm)),
                        ("integrated", tenth(l.integrated)), ("truePeak", tenth(l.truePeak)), ("gain", tenth(l.gain))])
    }

    static func json(_ r: RenditionStats) -> JSONValue {
        .object([
            ("video", .string(r.rendition.description)),
            ("outputs", .array(r.outputs.map { .int(Int64($0)) })),
            ("framesEncoded", .int(Int64(r.framesEncoded))),
            ("bitrate", .int(Int64(r.bitrate))),
        ])
    }

    static func json(_ o: OutputStats) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("id", .int(Int64(o.id))),
            ("kind", .string(o.kind)),
            ("url", .string(o.url)),
            ("connected", .bool(o.isConnected)),
            ("bytesSent", .int(o.bytesSent)),
            ("videoFramesSent", .int(Int64(o.videoFramesSent))),
            ("audioFramesSent", .int(Int64(o.audioFramesSent))),
            ("bitrate", .int(Int64(o.bitrate))),
            ("droppedFrames", .int(Int64(o.droppedFrames.total))),
            ("queuedDuration", .double(Double(o.queuedDuration) / 1_000_000)),
            ("reconnects", .int(Int64(o.reconnects))),
        ]
        if let link = o.srt {
            fields.append(("srt", .object([
                ("rttMs", .double(link.roundTripMs)), ("packetsSent", .int(link.packetsSent)),
                ("packetsLost", .int(link.packetsLost)), ("packetsRetransmitted", .int(link.packetsRetransmitted)),
                ("packetsDropped", .int(link.packetsDropped)), ("bandwidthMbps", .double(link.bandwidthMbps)),
            ])))
        }
        if let hls = o.hls {
            fields.append(("hls", .object([
                ("segments", .int(Int64(hls.segments))), ("splicesMoved", .int(Int64(hls.splicesMoved))),
                ("forcedCuts", .int(Int64(hls.forcedCuts))), ("filesWritten", .int(Int64(hls.filesWritten))),
                ("bytesWritten", .int(hls.bytesWritten)), ("segmentsRemoved", .int(Int64(hls.segmentsRemoved))),
                ("removalsFailed", .int(Int64(hls.removalsFailed))), ("mostQueuedBytes", .int(Int64(hls.mostQueuedBytes))),
            ])))
        }
        return .object(fields)
    }

    private static func summaryFields(_ s: PushStats) -> [(String, JSONValue)] {
        [
            ("elapsed", .double(seconds(s.elapsed))),
            ("mediaTimeSent", .double(Double(s.mediaTimeSent) / 1_000_000)),
            ("sourceDuration", .double(Double(s.sourceDuration) / 1_000_000)),
            ("loopsCompleted", .int(Int64(s.loopsCompleted))),
            ("videoFramesSent", .int(Int64(s.videoFramesSent))),
            ("audioFramesSent", .int(Int64(s.audioFramesSent))),
            ("bytesSent", .int(s.bytesSent)),
            ("bitrate", .int(Int64(s.bitrate))),
            ("fps", .double((s.fps * 10).rounded() / 10)),
            ("droppedFrames", .object([
                ("disposable", .int(Int64(s.droppedFrames.disposable))),
                ("reference", .int(Int64(s.droppedFrames.reference))),
                ("keyframes", .int(Int64(s.droppedFrames.keyframes))),
                ("audio", .int(Int64(s.droppedFrames.audio))),
            ])),
            ("queuedPackets", .int(Int64(s.queuedPackets))),
            ("queuedDuration", .double(Double(s.queuedDuration) / 1_000_000)),
            ("pipeline", .object([
                ("encoderBitrate", .int(Int64(s.pipeline.encoderBitrate))),
                ("bitrateChanges", .int(Int64(s.pipeline.bitrateChanges))),
                ("encoderCapacityFPS", .double((s.pipeline.encoderCapacityFPS * 10).rounded() / 10)),
                ("filteredFrames", .int(Int64(s.pipeline.filteredFrames))),
                ("lowPerformanceEpisodes", .int(Int64(s.pipeline.lowPerformanceEpisodes))),
            ])),
        ]
    }

    static func text(_ event: PushEvent) -> String {
        if case .output(let id, let url, let inner) = event {
            let line = text(inner)
            let head = "[\(inner.group.rawValue)] \(inner.name)"
            return head + " (output \(id) \(url))" + line.dropFirst(head.count)
        }
        let head = "[\(event.group.rawValue)] \(event.name)"
        switch event {
        case .pushStarted(let url), .pushURLAuthenticationOverdue(let url):
            return "\(head) \(url)"
        case .stats(let s):
            return "\(head) \(summary(s))"
        case .stopped(let s):
            return "\(head) sent \(s.videoFramesSent) video + \(s.audioFramesSent) audio frames, \(s.bytesSent) bytes, dropped \(s.droppedFrames.total)"
        case .stateChanged(let state):
            return "\(head) \(state)"
        case .reconnectStarted(let attempt):
            return "\(head) attempt \(attempt)"
        case .retryScheduled(let attempt, let delay, let cause):
            return "\(head) attempt \(attempt) in \(seconds(delay)) s, after \(cause.code.rawValue) [\(cause.code.hex)] \(cause.message)"
        case .staleSession(let attempt, let waited, let retryIn):
            return "\(head) the server still holds the previous session (attempt \(attempt), waited \(seconds(waited)) s); retrying in \(seconds(retryIn)) s"
        case .videoBitrateChanged(let from, let to):
            return "\(head) \(from) -> \(to) kbps"
        case .reconnectRequested(let url, let description):
            return "\(head) the server asked to move; switching to \(url) at a keyframe" + (description.map { " (\($0))" } ?? "")
        case .cueMoved(let from, let to):
            return "\(head) a splice at \(seconds(from)) s starts its segment at the next keyframe, \(seconds(to)) s"
        case .serverCapabilities(let c):
            return "\(head) \(c)"
        case .bgmProgress(let position, let duration):
            return "\(head) \(clock(position.nanosecondsValue / 1000)) / \(clock(duration.nanosecondsValue / 1000))"
        case .filterCreated(let name), .filterDestroyed(let name):
            return "\(head) \(name)"
        case .filterFailed(let name, let error):
            return "\(head) \(name): \(error.code.rawValue) [\(error.code.hex)] \(error.message)"
        case .playout(.entryStarted(let e)), .playout(.entryEnded(let e)):
            return "\(head) \(e.kind.rawValue) \(e.id) (\(e.source) \(e.inPoint)-\(e.outPoint) s)"
        case .playout(.adBreakStarted(let name)), .playout(.adBreakEnded(let name)):
            return "\(head) \(name)"
        case .playout(.aired(let record)):
            return "\(head) \(record.jsonLine)"
        case .networkQualityChanged(let quality):
            return "\(head) \(quality.rawValue)"
        case .connectionStatusChanged(let status):
            return "\(head) \(status.rawValue)"
        case .input(.primaryRetry(let error, let retryIn)):
            return "\(head) \(error.code.rawValue) [\(error.code.hex)] \(error.message); retrying in \(seconds(retryIn)) s"
        case .breaks(.breakStarted(let o, let fill)):
            return "\(head) \(o.kind.rawValue) \(o.id), filled with \(fill)"
        case .breaks(let inner) where inner.opportunity != nil:
            let o = inner.opportunity!
            let length = o.duration.map { " for \(String(format1: Double($0) / 1e6)) s" } ?? ""
            let error = event.error.map { ": \($0.code.rawValue) [\($0.code.hex)] \($0.message)" } ?? ""
            return "\(head) \(o.kind.rawValue) \(o.id)\(length)\(error)"
        default:
            if let error = event.error { return "\(head) \(error.code.rawValue) [\(error.code.hex)] \(error.message)" }
            return head
        }
    }

    /// Milliseconds precision, as seconds.
    static func seconds(_ d: Duration) -> Double { Double(d.nanosecondsValue / 1_000_000) / 1000 }

    static func summary(_ s: PushStats) -> String {
        "media \(clock(s.mediaTimeSent)) / \(clock(s.sourceDuration)), \(s.bitrate / 1000) kbps, \(String(format1: s.fps)) fps, queue \(s.queuedPackets), dropped \(s.droppedFrames.total)"
    }

    static func clock(_ microseconds: Int64) -> String {
        let total = max(0, microseconds / 1_000_000)
        let (m, sec) = (total / 60, total % 60)
        return "\(m):" + (sec < 10 ? "0" : "") + "\(sec)"
    }
}

extension Duration {
    var nanosecondsValue: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

extension String {
    /// One decimal place, without Foundation's String(format:).
    init(format1 value: Double) {
        let tenths = Int64((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}

import LivePushWire

/// An HLS output's stream, pure: the packets stamped on the output clock go in, in order; what
/// to store comes out (``HLSWrite``): each segment once it is complete, then the playlist
/// that lists it, then the removal of a segment that left the window.
///
/// The segments are MPEG-TS from the push's own muxer (each opens with PAT and PMT), or CMAF
/// (``HLSFragments``: an init segment, then a `moof` and `mdat` per segment); where they start is
/// the ``HLSSegmenter``'s decision either way, their cue tags the ``HLSCueTags``'. A segment's
/// `#EXT-X-PROGRAM-DATE-TIME` is the push's wall-clock start plus the output time of its first
/// packet: nothing here reads a clock.
///
/// It outlives a connection: a write that failed ends the connection, and the next one goes on
/// with the same stream (the same numbering, the open segment, the open break). It is used as
/// one value, parked and taken, never copied and used twice (a CMAF muxer is shared by copies).
struct HLSStream: Sendable {
    /// The playlist's file name (`index.m3u8`).
    let playlistName: String
    /// The segments' names are this and their number: `index0.ts`, `index1.ts`.
    let segmentStem: String
    let options: HLSOptions
    /// Wall-clock µs at output time 0 (the push's start).
    let wallStart: Int64
    /// The segments' muxer: MPEG-TS, or CMAF; exactly one is set. (Two optionals rather than
    /// an enum: a muxer taken out of an enum case to be changed would copy its buffers.)
    private var tsMuxer: TSMuxer?
    private var fragments: HLSFragments?
    private var segmenter: HLSSegmenter
    private var cueTags: HLSCueTags
    private var playlist = HLSMediaPlaylist()
    /// The segment being written.
    private var open: OpenSegment?
    private var buffer: [UInt8] = []
    private var nextNumber = 0
    /// Where the latest picture (or, without video, sound frame) ends, output µs.
    private var mediaEnd: Int64?
    /// Segments that left the playlist and are still stored (one is kept: a player that read the
    /// playlist before may still be fetching it).
    private var retired: [HLSMediaPlaylist.Segment] = []
    /// The next segment starts a discontinuity (CMAF: a new init segment).
    private var discontinuity = false
    /// A CMAF muxer's failure, for the connection to end with (once).
    private var failure: LivePushError?
    /// Segments written, splices whose keyframe came late (the cut moved to it), and segments
    /// cut where no keyframe came.
    private(set) var figures = HLSFigures()

    private struct OpenSegment: Sendable {
        var number: Int
        var start: Int64
        var splices: [HLSSplice]
    }

    /// An MPEG-TS stream written with `muxer`.
    init(playlistName: String, options: HLSOptions, forms: HLSCueTags.Forms, muxer: TSMuxer, info: StreamInfo, wallStart: Int64) {
        self.init(playlistName: playlistName, options: options, forms: forms, info: info, wallStart: wallStart)
        tsMuxer = muxer
    }

    /// The stream `options` ask for (``HLSOptions/segmentType``); throws for a stream its
    /// segments cannot carry (MPEG-TS: H.264 or HEVC and AAC).
    /// `segmentStem`: what the segments' names start with (the playlist's stem by default).
    static func make(playlistName: String, segmentStem: String? = nil, options: HLSOptions, forms: HLSCueTags.Forms, info: StreamInfo,
                     wallStart: Int64) throws(LivePushError) -> HLSStream {
        var stream = HLSStream(playlistName: playlistName, segmentStem: segmentStem, options: options, forms: forms, info: info,
                               wallStart: wallStart)
        switch options.segmentType {
        case .mpegts: stream.tsMuxer = try TSMuxer.make(for: info, output: "an HLS output")
        case .fmp4: stream.fragments = HLSFragments(stem: stem(of: playlistName), info: info, videoFrame: frameDuration(of: info))
        }
        return stream
    }

    private init(playlistName: String, segmentStem: String? = nil, options: HLSOptions, forms: HLSCueTags.Forms, info: StreamInfo,
                 wallStart: Int64) {
        self.playlistName = playlistName
        self.segmentStem = segmentStem ?? Self.stem(of: playlistName)
        self.options = options
        self.wallStart = wallStart
        segmenter = HLSSegmenter(targetDuration: options.targetDuration, hasVideo: info.video != nil,
                                 frameDuration: Self.frameDuration(of: info))
        cueTags = HLSCueTags(forms: forms)
    }

    /// `index.m3u8` → `index`.
    static func stem(of playlistName: String) -> String {
        playlistName.lowercased().hasSuffix(".m3u8") ? String(playlistName.dropLast(5)) : playlistName
    }

    /// One picture's length (µs), 40 ms when the rate is unknown; without video, one AAC frame's.
    static func frameDuration(of info: StreamInfo) -> Int64 {
        if let video = info.video, video.frameRate > 0 { return Int64(1_000_000 / video.frameRate) }
        if info.video != nil { return 40_000 }
        return Int64(1024 * 1_000_000 / max(8000, info.audio?.sampleRate ?? 48_000))
    }

    /// The failure of the CMAF muxer, once: the connection ends with it.
    mutating func takeFailure() -> LivePushError? { failure.take() }

    /// The splices announced and not reached yet (for tests and figures).
    var pendingSplices: [HLSSplice] { segmenter.pending }

    /// Takes one packet; returns what to store now (nothing, unless a segment was completed).
    mutating func take(_ packet: MediaPacket) -> [HLSWrite] {
        var writes: [HLSWrite] = []
        switch packet.kind {
        case _ where packet.isSequenceHeader:
            fragments?.adopt(sequenceHeader: packet)
        case .cue:
            if let splice = HLSSplice(section: packet.data, arrival: packet.dts), segmenter.receive(splice) {
                open?.splices.append(splice)
            }
        case .video, .audio:
            if let start = restartsForNewConfiguration(packet) ?? segmenter.admit(isVideo: packet.kind == .video, pts: packet.pts,
                                                                                 keyframe: packet.isKeyframe) {
                writes = begin(start)
            }
            if packet.kind == .video || !segmenter.hasVideo {
                let length = packet.duration > 0 ? packet.duration : segmenter.frameDuration
                mediaEnd = max(mediaEnd ?? .min, packet.pts + length)
            }
        case .data:
            break
        }
        if tsMuxer != nil {
            let before = buffer.count
            tsMuxer?.write(packet, into: &buffer)
            figures.bytesMuxed += Int64(buffer.count - before)
        } else if fragments != nil {
            do throws(LivePushError) {
                try fragments?.write(packet)
                if packet.kind == .video || packet.kind == .audio, !packet.isSequenceHeader { figures.bytesMuxed += Int64(packet.data.count) }
            } catch {
                failure = failure ?? error
            }
        }
        return writes
    }

    /// CMAF: the first frame after a new configuration starts a segment (a picture's keyframe;
    /// without video, a sound frame), whatever the open one's length.
    private mutating func restartsForNewConfiguration(_ packet: MediaPacket) -> HLSSegmenter.Start? {
        guard fragments?.changed == true, segmenter.segmentStart != nil,
              packet.kind == .video ? packet.isKeyframe : !segmenter.hasVideo else { return nil }
        return segmenter.restart(at: packet.pts)
    }

    /// The end of the stream: the open segment is completed, and the playlist says that
    /// nothing follows (`#EXT-X-ENDLIST`).
    mutating func finish() -> [HLSWrite] {
        playlist.ended = true
        guard let open else {
            return nextNumber == 0 ? [] : [.put(name: playlistName, bytes: Array(playlist.text.utf8))]
        }
        return complete(open, end: max(mediaEnd ?? open.start, open.start + 1))
    }

    /// A splice the output moved to the next keyframe (a copied source had none at it): output
    /// times (µs).
    struct MovedSplice: Sendable, Equatable {
        let from: Int64
        let to: Int64
    }

    /// Moves not yet reported, at most ``movedSplicesKept`` (a source that cues every frame is
    /// counted in full in the figures, not reported move by move).
    private var movedSplices: [MovedSplice] = []
    static let movedSplicesKept = 16

    /// The splices moved since the last call, for the output's `cueMoved` events.
    mutating func takeMovedSplices() -> [MovedSplice] {
        defer { movedSplices.removeAll() }
        return movedSplices
    }

    /// A segment starts with the packet being taken: the open one is complete.
    private mutating func begin(_ start: HLSSegmenter.Start) -> [HLSWrite] {
        var writes: [HLSWrite] = []
        if let open { writes = complete(open, end: start.time) }
        if fragments?.changed == true {
            fragments?.startDiscontinuity()
            discontinuity = true
        }
        if start.lateBy > 0 { figures.splicesMoved += 1 }
        if start.forced { figures.forcedCuts += 1 }
        // A splice more than a frame from the keyframe that starts its segment moves to it, and
        // the output says so (``takeMovedSplices()``).
        let splices = start.splices.map { splice -> HLSSplice in
            guard abs(splice.time - start.time) > segmenter.frameDuration else { return splice }
            if movedSplices.count < Self.movedSplicesKept { movedSplices.append(MovedSplice(from: splice.time, to: start.time)) }
            return splice.moved(to: start.time)
        }
        open = OpenSegment(number: nextNumber, start: start.time, splices: splices)
        nextNumber += 1
        tsMuxer?.repeatTablesAtNextPacket()
        return writes
    }

    private mutating func complete(_ segment: OpenSegment, end: Int64) -> [HLSWrite] {
        var writes: [HLSWrite] = []
        let name: String
        var map: String?
        if var fragments {
            name = "\(segmentStem)\(segment.number).m4s"
            map = fragments.mapName
            do throws(LivePushError) {
                let cut = try fragments.cut()
                if let initSegment = cut.initSegment { writes.append(.put(name: fragments.mapName, bytes: initSegment)) }
                writes.append(.put(name: name, bytes: cut.fragment))
            } catch {
                failure = failure ?? error
                writes.append(.put(name: name, bytes: []))
            }
            self.fragments = fragments
        } else {
            name = "\(segmentStem)\(segment.number).ts"
            writes.append(.put(name: name, bytes: buffer))
            let written = buffer.count
            buffer = []
            buffer.reserveCapacity(written + written / 4)
        }
        let date = wallStart + segment.start
        open = nil
        figures.count(segmentBytes: writes.last?.byteCount ?? 0, duration: end - segment.start, target: options.targetDuration)
        let tags = cueTags.tags(forSegmentAt: segment.start, date: date, splices: segment.splices)
        playlist.segments.append(.init(uri: name, duration: end - segment.start, programDateTime: date, tags: tags, map: map,
                                       discontinuity: discontinuity))
        discontinuity = false
        var leaving: [HLSMediaPlaylist.Segment] = []
        if options.listSize > 0, playlist.segments.count > options.listSize {
            leaving = playlist.removeOldest(playlist.segments.count - options.listSize)
        }
        writes.append(.put(name: playlistName, bytes: Array(playlist.text.utf8)))
        // Never shrinks: a live playlist's target stays what it was.
        playlist.minimumTargetDuration = playlist.targetDuration
        retired += leaving
        while retired.count > Self.retiredKept {
            let gone = retired.removeFirst()
            writes.append(.delete(name: gone.uri))
            // An init segment goes with the last stored segment that needs it.
            if let map = gone.map, map != currentMap, !retired.contains(where: { $0.map == map }),
               !playlist.segments.contains(where: { $0.map == map }) {
                writes.append(.delete(name: map))
            }
        }
        return writes
    }

    /// The init segment the next CMAF segment needs (nil for MPEG-TS).
    private var currentMap: String? { fragments?.mapName }

    /// Segments kept stored after they left the playlist.
    static let retiredKept = 1
}

/// What an HLS output counts of its segmenting.
struct HLSFigures: Sendable, Equatable {
    /// Segments completed (handed to the store).
    var segments = 0
    /// TS bytes muxed.
    var bytesMuxed: Int64 = 0
    /// Splices whose segment started at a later keyframe than the splice (a copied source
    /// without a keyframe there), more than a frame late.
    var splicesMoved = 0
    /// Segments cut where no keyframe came for ``HLSSegmenter/maxSegmentDuration``.
    var forcedCuts = 0
    /// The segments' bytes and lengths (µs), and the highest bit rate of one at least half the
    /// target long (a last short segment says little): a master playlist's `AVERAGE-BANDWIDTH`
    /// and `BANDWIDTH`.
    var segmentBytes: Int64 = 0
    var segmentMicros: Int64 = 0
    var peakBitsPerSecond = 0
    /// The peak of the short segments, used only while no segment was long enough.
    private var shortPeak = 0

    /// Bits per second over every segment written (0 before the first).
    var averageBitsPerSecond: Int { segmentMicros > 0 ? Int(segmentBytes * 8 * 1_000_000 / segmentMicros) : 0 }
    /// The highest segment bit rate (the short segments' while there is no other).
    var highestBitsPerSecond: Int { peakBitsPerSecond > 0 ? peakBitsPerSecond : shortPeak }

    mutating func count(segmentBytes bytes: Int, duration: Int64, target: Int64) {
        segments += 1
        segmentBytes += Int64(bytes)
        segmentMicros += max(0, duration)
        guard duration > 0 else { return }
        let rate = Int(Int64(bytes) * 8 * 1_000_000 / duration)
        if duration * 2 >= target { peakBitsPerSecond = max(peakBitsPerSecond, rate) } else { shortPeak = max(shortPeak, rate) }
    }
}

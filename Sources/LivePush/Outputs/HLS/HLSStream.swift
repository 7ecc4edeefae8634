import LivePushWire

/// An HLS output's stream, pure: the packets stamped on the output clock go in, in order; what
/// to store comes out (``HLSWrite``): each segment once it is complete, then the playlist
/// that lists it, then the removal of a segment that left the window.
///
/// The segments are MPEG-TS from the push's own muxer (each opens with PAT and PMT); where they
/// start is the ``HLSSegmenter``'s decision, their cue tags the ``HLSCueTags``'. A segment's
/// `#EXT-X-PROGRAM-DATE-TIME` is the push's wall-clock start plus the output time of its first
/// packet: nothing here reads a clock.
///
/// It outlives a connection: a write that failed ends the connection, and the next one goes on
/// with the same stream (the same numbering, the open segment, the open break).
struct HLSStream: Sendable {
    /// The playlist's file name (`index.m3u8`).
    let playlistName: String
    /// The segments' names are this and their number: `index0.ts`, `index1.ts`.
    let segmentStem: String
    let options: HLSOptions
    /// Wall-clock µs at output time 0 (the push's start).
    let wallStart: Int64
    private var muxer: TSMuxer
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
    private var retired: [String] = []
    /// Segments written, splices whose keyframe came late (the cut moved to it), and segments
    /// cut where no keyframe came.
    private(set) var figures = HLSFigures()

    private struct OpenSegment: Sendable {
        var number: Int
        var start: Int64
        var splices: [HLSSplice]
    }

    init(playlistName: String, options: HLSOptions, forms: HLSCueTags.Forms, muxer: TSMuxer, info: StreamInfo, wallStart: Int64) {
        self.playlistName = playlistName
        segmentStem = playlistName.lowercased().hasSuffix(".m3u8") ? String(playlistName.dropLast(5)) : playlistName
        self.options = options
        self.wallStart = wallStart
        self.muxer = muxer
        let frame: Int64 = if let video = info.video, video.frameRate > 0 {
            Int64(1_000_000 / video.frameRate)
        } else if info.video != nil {
            40_000
        } else {
            Int64(1024 * 1_000_000 / max(8000, info.audio?.sampleRate ?? 48_000))
        }
        segmenter = HLSSegmenter(targetDuration: options.targetDuration, hasVideo: info.video != nil, frameDuration: frame)
        cueTags = HLSCueTags(forms: forms)
    }

    /// The splices announced and not reached yet (for tests and figures).
    var pendingSplices: [HLSSplice] { segmenter.pending }

    /// Takes one packet; returns what to store now (nothing, unless a segment was completed).
    mutating func take(_ packet: MediaPacket) -> [HLSWrite] {
        var writes: [HLSWrite] = []
        switch packet.kind {
        case _ where packet.isSequenceHeader:
            break
        case .cue:
            if let splice = HLSSplice(section: packet.data, arrival: packet.dts), segmenter.receive(splice) {
                open?.splices.append(splice)
            }
        case .video, .audio:
            if let start = segmenter.admit(isVideo: packet.kind == .video, pts: packet.pts, keyframe: packet.isKeyframe) {
                writes = begin(start)
            }
            if packet.kind == .video || !segmenter.hasVideo {
                let length = packet.duration > 0 ? packet.duration : segmenter.frameDuration
                mediaEnd = max(mediaEnd ?? .min, packet.pts + length)
            }
        case .data:
            break
        }
        let before = buffer.count
        muxer.write(packet, into: &buffer)
        figures.bytesMuxed += Int64(buffer.count - before)
        return writes
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

    /// A segment starts with the packet being taken: the open one is complete.
    private mutating func begin(_ start: HLSSegmenter.Start) -> [HLSWrite] {
        var writes: [HLSWrite] = []
        if let open { writes = complete(open, end: start.time) }
        if start.lateBy > 0 { figures.splicesMoved += 1 }
        if start.forced { figures.forcedCuts += 1 }
        // A splice more than a frame from the keyframe that starts its segment moves to it.
        let splices = start.splices.map { abs($0.time - start.time) > segmenter.frameDuration ? $0.moved(to: start.time) : $0 }
        open = OpenSegment(number: nextNumber, start: start.time, splices: splices)
        nextNumber += 1
        muxer.repeatTablesAtNextPacket()
        return writes
    }

    private mutating func complete(_ segment: OpenSegment, end: Int64) -> [HLSWrite] {
        let name = "\(segmentStem)\(segment.number).ts"
        let date = wallStart + segment.start
        var writes: [HLSWrite] = [.put(name: name, bytes: buffer)]
        let written = buffer.count
        buffer = []
        buffer.reserveCapacity(written + written / 4)
        open = nil
        figures.segments += 1
        let tags = cueTags.tags(forSegmentAt: segment.start, date: date, splices: segment.splices)
        playlist.segments.append(.init(uri: name, duration: end - segment.start, programDateTime: date, tags: tags))
        var leaving: [String] = []
        if options.listSize > 0, playlist.segments.count > options.listSize {
            let count = playlist.segments.count - options.listSize
            leaving = playlist.segments.prefix(count).map(\.uri)
            playlist.segments.removeFirst(count)
            playlist.mediaSequence += count
        }
        writes.append(.put(name: playlistName, bytes: Array(playlist.text.utf8)))
        // Never shrinks: a live playlist's target stays what it was.
        playlist.minimumTargetDuration = playlist.targetDuration
        retired += leaving
        while retired.count > Self.retiredKept {
            writes.append(.delete(name: retired.removeFirst()))
        }
        return writes
    }

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
}

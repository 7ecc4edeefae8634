import Synchronization
import LivePushWire

/// One ``FragmentedMP4Muxer`` for an HLS output's CMAF segments, made `Sendable` by a lock: the
/// output's stream (``HLSStream``, a `Sendable` value) is parked in its writer between two
/// connections and taken by the next, on other threads; the muxer goes with it. Only the
/// connection that holds the stream writes, so the lock is never contended.
///
/// Its fragments are on the MPEG-TS timeline (output time + ``TSClock/timestampOffset``), as
/// a TS segment's PTS are: a cue tag's quoted `pts_adjustment` says the same in both segment
/// types, and the muxer made after a configuration change goes on where this one ended.
final class HLSFragmentMuxer: Sendable {
    /// `ftyp` and `moov`: the playlist's `#EXT-X-MAP`.
    let initSegment: [UInt8]
    private let muxer: Mutex<FragmentedMP4Muxer>

    init(stream: StreamInfo) throws(LivePushError) {
        let made = try FragmentedMP4Muxer(stream: stream, keepsTimestamps: true)
        initSegment = made.initSegment
        muxer = Mutex(made)
    }

    /// Adds a coded frame (output time) to the open fragment.
    func write(_ packet: MediaPacket) throws(LivePushError) {
        var shifted = packet
        shifted.dts += TSClock.timestampOffset
        shifted.pts += TSClock.timestampOffset
        try muxer.withLock { (muxer) throws(LivePushError) in try muxer.write(shifted) }
    }

    /// The open fragment (`moof` and `mdat`), ended; empty when it holds nothing.
    func cut() throws(LivePushError) -> [UInt8] {
        try muxer.withLock { (muxer) throws(LivePushError) -> [UInt8] in try muxer.cut() }
    }
}

import LivePushWire
#if canImport(Glibc)
import Glibc
#endif

/// An SRT output's connection: the packets as MPEG-TS (``TSMuxer``), sent as SRT messages of
/// up to seven TS packets (the payload size), as far as SRT's send buffer takes them.
///
/// Cues go into the stream itself, on the SCTE-35 PID (``TSMuxer/write(_:into:)``, shared with
/// the HLS output).
final class SRTConnection: OutputConnection {
    let session: SRTSession
    private var muxer: TSMuxer
    /// TS bytes SRT has not taken yet, from `sentOffset` on.
    private var pending: [UInt8] = []
    private var sentOffset = 0
    private let payloadSize: Int
    /// What a turn may leave waiting before the output counts the connection as blocked.
    private static let pendingLimit = 64 * 1024

    init(session: SRTSession, muxer: TSMuxer) {
        self.session = session
        payloadSize = session.srtOptions.payloadSize
        self.muxer = muxer
    }

    /// The muxer writes its tables before the first packet (and every keyframe) itself.
    func header(at time: Int64) -> [[UInt8]] { [] }

    func trailer(at time: Int64) -> [[UInt8]] { [] }

    func message(for packet: MediaPacket) -> [UInt8] {
        var bytes: [UInt8] = []
        muxer.write(packet, into: &bytes)
        return bytes
    }

    func bodyBytes(of message: [UInt8]) -> Int { message.count }
    func wireBytes(of message: [UInt8]) -> Int64 { Int64(message.count) }

    func hasRoom(for bytes: Int64) -> Bool {
        pending.count - sentOffset == 0 || pending.count - sentOffset + Int(bytes) <= Self.pendingLimit
    }

    func send(_ message: [UInt8]) throws(LivePushError) {
        pending.append(contentsOf: message)
    }

    /// Hands SRT whole messages (seven TS packets, or what is left) until its buffer is full.
    func flush() throws(LivePushError) -> Bool {
        defer {
            if sentOffset == pending.count {
                pending.removeAll(keepingCapacity: true)
                sentOffset = 0
            } else if sentOffset > Self.pendingLimit {
                pending.removeSubrange(0..<sentOffset)
                sentOffset = 0
            }
        }
        while sentOffset < pending.count {
            let count = min(payloadSize, pending.count - sentOffset)
            let start = sentOffset
            let taken = pending.withUnsafeBytes { bytes -> Result<Bool, LivePushError> in
                do throws(LivePushError) {
                    return .success(try session.send(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + count)])))
                } catch {
                    return .failure(error)
                }
            }
            guard try taken.get() else { return false }
            sentOffset += count
        }
        return true
    }

    var hasUnwrittenBytes: Bool { sentOffset < pending.count }
    var bytesSent: Int64 { session.bytesSent }
    var transportBacklog: Int64 { Int64(pending.count - sentOffset) }

    /// SRT reads its peer itself; this notices a connection it found broken.
    func serviceIncoming() throws(LivePushError) -> UInt32? {
        try session.checkConnected()
        return nil
    }

    func takeLinkReport() -> LinkReport? { session.linkStats.map(LinkReport.srt) }

    func waitUntilWritable(timeout: Duration) {
        // SRT has no descriptor to poll for room here: a short sleep, bounded by the caller.
        var request = timespec(tv_sec: 0, tv_nsec: Int(min(timeout.nanoseconds, 20_000_000)))
        nanosleep(&request, nil)
    }

    /// A graceful close lets SRT deliver what it holds, up to a second (a receiver with the
    /// default 120 ms latency has it by then).
    func close(graceful: Bool) {
        if graceful { _ = try? flush() }
        session.close(lingering: graceful ? .seconds(1) : .zero, padding: TSMuxer.nullPacket)
    }
}

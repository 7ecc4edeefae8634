import CFFmpeg

/// Bytes a demuxer reads that no URL or file gives: an HLS input's segments, fetched by its
/// own HTTP client, handed to libavformat through a custom AVIO read callback
/// (``FFDemuxer/init(source:name:)``). Called on the thread that reads the demuxer, from inside
/// its calls; it may wait (its own waits are bounded).
protocol DemuxerByteSource: AnyObject {
    /// Copies up to `buffer.count` bytes into `buffer`; the count, or 0 at the end of the
    /// stream (or a failure, which the source keeps for its owner to report).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int
}

/// Holds the source for the callback's opaque pointer (an existential cannot be one).
final class DemuxerByteSourceBox {
    let source: any DemuxerByteSource

    init(_ source: any DemuxerByteSource) {
        self.source = source
    }

    /// libavformat's read callback (through a C closure in ``FFDemuxer/init(source:name:)``):
    /// `opaque` is the box, kept alive by the demuxer.
    static func read(_ opaque: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ size: Int32) -> Int32 {
        guard let opaque, let buffer, size > 0 else { return livepush_averror_eof() }
        let box = Unmanaged<DemuxerByteSourceBox>.fromOpaque(opaque).takeUnretainedValue()
        let count = box.source.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(size)))
        return count > 0 ? Int32(min(count, Int(size))) : livepush_averror_eof()
    }
}

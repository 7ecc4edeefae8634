import CFFmpeg

/// A block of raw audio on its way to the encoder: planar 32-bit float, one buffer per
/// channel, at the push's sample rate. What audio processing (BGM mixing, effects) works on.
///
/// Like ``VideoFrame``, a value over a ref-counted `AVFrame`: copies share the samples and
/// the first write through a shared copy makes a private one.
public struct AudioFrame: Sendable {
    var storage: FrameStorage
    /// Presentation time of the first sample, microseconds on the push's timeline.
    public var timestamp: Int64

    /// Samples per second.
    public var sampleRate: Int { Int(storage.frame.pointee.sample_rate) }
    /// Number of channels.
    public var channels: Int { Int(storage.frame.pointee.ch_layout.nb_channels) }
    /// Samples per channel.
    public var sampleCount: Int { Int(storage.frame.pointee.nb_samples) }
    /// Length in microseconds.
    public var duration: Int64 { sampleRate > 0 ? Int64(sampleCount) * 1_000_000 / Int64(sampleRate) : 0 }

    /// Wraps a planar-float frame without copying (nil for any other sample format).
    init?(referencing frame: UnsafePointer<AVFrame>, timestamp: Int64) throws(LivePushError) {
        guard frame.pointee.format == AV_SAMPLE_FMT_FLTP.rawValue else { return nil }
        storage = try FrameStorage(referencing: frame)
        self.timestamp = timestamp
    }

    /// Silence: `sampleCount` zero samples per channel.
    public init(sampleRate: Int, channels: Int, sampleCount: Int, timestamp: Int64 = 0) throws(LivePushError) {
        guard sampleRate > 0, (1...8).contains(channels), sampleCount > 0 else {
            throw LivePushError(.transcodeFailed, "audio frame of \(sampleCount) samples, \(channels) channels at \(sampleRate) Hz")
        }
        guard let frame = av_frame_alloc() else { throw LivePushError(.outOfMemory, "av_frame_alloc") }
        storage = FrameStorage(adopting: frame)
        frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        frame.pointee.sample_rate = Int32(sampleRate)
        frame.pointee.nb_samples = Int32(sampleCount)
        av_channel_layout_default(&frame.pointee.ch_layout, Int32(channels))
        let rc = av_frame_get_buffer(frame, 0)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "av_frame_get_buffer: \(FF.describe(rc))") }
        av_samples_set_silence(frame.pointee.extended_data, 0, Int32(sampleCount), Int32(channels), AV_SAMPLE_FMT_FLTP)
        self.timestamp = timestamp
    }

    /// Reads channel `index`'s samples.
    public func withChannel<R>(_ index: Int, _ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        precondition(index >= 0 && index < channels, "channel \(index) of \(channels)")
        let base = UnsafeRawPointer(storage.frame.pointee.extended_data[index]!).assumingMemoryBound(to: Float.self)
        return try body(UnsafeBufferPointer(start: base, count: sampleCount))
    }

    /// Writes channel `index` in place. Copies the samples first if they are shared.
    public mutating func withMutableChannel<R>(_ index: Int, _ body: (UnsafeMutableBufferPointer<Float>) throws -> R) throws -> R {
        precondition(index >= 0 && index < channels, "channel \(index) of \(channels)")
        if !isKnownUniquelyReferenced(&storage) {
            storage = try FrameStorage(referencing: storage.frame)
        }
        if !storage.isWritable { try storage.makeWritable() }
        let base = UnsafeMutableRawPointer(storage.frame.pointee.extended_data[index]!).assumingMemoryBound(to: Float.self)
        return try body(UnsafeMutableBufferPointer(start: base, count: sampleCount))
    }

    /// Writes `count` samples per channel at `offset`, read from `planes` (one float buffer per
    /// channel, as libswresample hands them out). Copies the samples first if they are shared.
    mutating func replaceSamples(at offset: Int, fromPlanes planes: [UnsafePointer<Float>], count: Int) throws(LivePushError) {
        precondition(planes.count == channels && offset >= 0 && offset + count <= sampleCount, "samples out of range")
        if !isKnownUniquelyReferenced(&storage) {
            storage = try FrameStorage(referencing: storage.frame)
        }
        if !storage.isWritable { try storage.makeWritable() }
        for (index, plane) in planes.enumerated() {
            let base = UnsafeMutableRawPointer(storage.frame.pointee.extended_data[index]!).assumingMemoryBound(to: Float.self)
            base.advanced(by: offset).update(from: plane, count: count)
        }
    }

    /// Channel `index`'s samples from `offset` on, for reading while this frame lives.
    func samples(ofChannel index: Int, from offset: Int) -> UnsafePointer<Float> {
        UnsafeRawPointer(storage.frame.pointee.extended_data[index]!).assumingMemoryBound(to: Float.self).advanced(by: offset)
    }
}

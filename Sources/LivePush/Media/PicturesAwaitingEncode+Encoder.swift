import CFFmpeg

/// What an encoder that keeps its pictures does around each call (``VideoFrameEncoder``,
/// ``VideoEncodeStage``): keep the picture going in, and hand each packet that comes out
/// the picture it was encoded from.
extension PicturesAwaitingEncode where Picture == VideoFrame {
    /// Keeps the picture that goes into the encoder at `time`: `scaled`, the scaler's output,
    /// when the picture was scaled (held by reference: the scaler's next scale takes a fresh
    /// buffer), else `picture` itself.
    mutating func keep(_ picture: VideoFrame, scaled: UnsafeMutablePointer<AVFrame>?, at time: Int64) throws(LivePushError) {
        var kept = try scaled.map { scaled throws(LivePushError) in try VideoFrame(referencing: scaled, timestamp: time) } ?? picture
        kept?.timestamp = time
        if let kept { add(kept, at: time) }
    }

    /// Hands the packets the encoder returned (`out` from `first` on) their pictures.
    mutating func attach(to out: inout [MediaPacket], from first: Int) {
        for index in first..<out.count where out[index].isVideoFrame {
            out[index].picture = take(at: out[index].pts)
        }
    }
}

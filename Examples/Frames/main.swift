// example-frames: an app that pushes pictures and sound it makes itself (a camera, a game, a
// renderer...), through `FrameInput`.
//
//     example-frames URL             e.g. example-frames rtmp://127.0.0.1/live/frames
//
// Generates 3 s of 320x240 video at 25 fps (a white bar moving across a grey picture) and a
// 440 Hz tone, pushes them to URL in real time, and exits 0 when the push ended well.
import Foundation
import LivePush

guard CommandLine.arguments.count == 2 else {
    print("usage: example-frames URL")
    exit(2)
}
let url = CommandLine.arguments[1]

/// What the app makes: its format, and each picture and piece of sound.
enum Generated {
    static let width = 320, height = 240, frameRate = 25, seconds = 3
    static let sampleRate = 48_000, samplesPerFrame = 1024

    /// Picture `index`: mid grey with a white bar 16 pixels wide, 8 pixels further right each frame.
    /// A VideoFrame is I420 by default: plane 0 is the luma, planes 1 and 2 (chroma) start neutral.
    static func picture(_ index: Int) throws -> VideoFrame {
        var frame = try VideoFrame(width: width, height: height, timestamp: Int64(index) * 1_000_000 / Int64(frameRate))
        let stride = frame.stride(ofPlane: 0)  // bytes per row; may be more than `width`
        let barX = (index * 8) % width
        try frame.withMutablePlane(0) { luma in
            for y in 0..<height {
                for x in 0..<width { luma[y * stride + x] = abs(x - barX) < 8 ? 235 : 128 }
            }
        }
        return frame
    }

    /// 1024 samples of the tone, from sample `first` on, in both channels (planar float, -1...1).
    static func tone(first: Int) throws -> AudioFrame {
        var frame = try AudioFrame(sampleRate: sampleRate, channels: 2, sampleCount: samplesPerFrame,
                                   timestamp: Int64(first) * 1_000_000 / Int64(sampleRate))
        for channel in 0..<2 {
            try frame.withMutableChannel(channel) { samples in
                for i in 0..<samplesPerFrame {
                    samples[i] = 0.3 * Float(sin(2 * Double.pi * 440 * Double(first + i) / Double(sampleRate)))
                }
            }
        }
        return frame
    }
}

// The input says what it will get; LivePush encodes it to H.264 and AAC. Timestamps are the
// frames' own (microseconds), so the push's pacing, not this loop, sets the real-time pace.
let input: FrameInput
let pusher = LivePusher(config: PushConfig())
let events = pusher.events()  // subscribe before `start`, so no event is missed
do {
    input = try FrameInput(video: .init(width: Generated.width, height: Generated.height,
                                        frameRate: Double(Generated.frameRate)),
                           audio: .init(sampleRate: Generated.sampleRate, channels: 2))
    try pusher.start(source: input, url: url)  // throws at once for a bad URL
} catch {
    print("cannot start: \(error)")
    exit(1)
}

// Feed the frames on a thread of their own: `send` waits while about 2 s are queued (the push
// is behind), and returns an error once the push has stopped (then there is no point going on).
Thread.detachNewThread {
    let (frameRate, sampleRate) = (Generated.frameRate, Generated.sampleRate)
    var samplesSent = 0
    do {
        for index in 0..<(Generated.seconds * frameRate) {
            let videoTime = index * 1_000_000 / frameRate
            // Audio up to this picture's time first, so both tracks advance together.
            while samplesSent * 1_000_000 / sampleRate <= videoTime {
                try input.send(Generated.tone(first: samplesSent))
                samplesSent += Generated.samplesPerFrame
            }
            try input.send(Generated.picture(index))
        }
    } catch {
        print("feeding stopped: \(error)")
    }
    input.finish()  // the end of the input: what is queued still goes out, then the push stops
}

// A watchdog, so that the example never hangs: 3 s of media plus connecting take far less.
Thread.detachNewThread {
    Thread.sleep(forTimeInterval: 30)
    print("the push did not end within 30 s")
    exit(1)
}

// Print what happens until the push ends (the stream of events ends after `stopped`).
var sent = PushStats()
for await event in events {
    switch event {
    case .stopped(let stats): sent = stats
    case .stats: break
    default: print(event.name)
    }
}
if case .failed(let error) = pusher.state {
    print("the push failed: \(error)")
    exit(1)
}
print("sent \(sent.videoFramesSent) video frames and \(sent.audioFramesSent) audio frames")

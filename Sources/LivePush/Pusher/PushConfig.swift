import Dispatch

/// Everything a ``LivePusher`` needs to know before it starts. A value: copy, tweak, pass.
///
/// Defaults follow the reference mobile push SDK where it has one (retry count and interval,
/// send timeout, statistics every 2 s).
public struct PushConfig: Sendable {
    /// How fast media is sent.
    public enum Pacing: Sendable, Equatable {
        /// Media timestamps follow the wall clock, like `ffmpeg -re`.
        case realTime
        /// As fast as the server accepts; the send queue applies back-pressure, nothing is dropped.
        case asFastAsPossible
    }

    /// How often a file input plays.
    public enum Looping: Sendable, Equatable {
        /// Push the source `n` times in total (`n >= 1`), timestamps increasing across passes.
        case times(Int)
        /// Until stopped.
        case forever

        /// Once.
        public static let once = Looping.times(1)
    }

    /// Real time (the default) or as fast as possible.
    public var pacing: Pacing = .realTime
    /// How ad breaks and blackouts are announced in the RTMP stream (a playout channel's).
    public var cueFormat: CueFormat = .adCue
    /// Per output, by position of its URL: outputs past the end of the list (and the recording)
    /// use ``cueFormat``.
    public var outputCueFormats: [CueFormat] = []
    /// Per output, by position of its URL: a video size and bitrate of its own, encoded after
    /// the clock and shared by the outputs that ask for the same one. When the input transcodes,
    /// it is encoded from the pictures the input encoded (its encode is never decoded again);
    /// a copied stream is decoded once for all renditions (``PushStats/renditionFramesFromInput``,
    /// ``PushStats/renditionFramesDecoded``). Outputs not listed carry the push's video as it is (stream copy when the
    /// source is H.264). An id with no URL fails `start` with `outputSettingsInvalid`.
    /// The first rendition of each output's ladder (``outputVideoLadders``); setting it gives
    /// each output a ladder of one.
    public var outputVideo: [Int: VideoRendition] {
        get { outputVideoLadders.compactMapValues(\.first) }
        set { outputVideoLadders = newValue.mapValues { [$0] } }
    }
    /// Per output, by position of its URL: its ladder, one variant per rendition, highest first
    /// as given (``outputVideo`` is a ladder of one). An HLS output with several writes a master
    /// playlist and one media playlist per variant, keyframe-aligned. An RTMP output sends them
    /// as Enhanced RTMP v2 multitrack video, the first on track 0 (``rtmpMultitrack``). An SRT
    /// or WHIP output given more than one fails `start` with `outputSettingsInvalid`.
    public var outputVideoLadders: [Int: [VideoRendition]] = [:]
    /// Which servers an RTMP output's ladder goes to as multitrack video: those that advertise
    /// it (the default; the others get track 0 and a warning), or every one.
    public var rtmpMultitrack: RTMPMultitrack = .whenAdvertised
    /// Video codecs in order of preference (`--video-codec hevc,h264`): each RTMP output that
    /// asked for no rendition of its own sends the first one its server confirms in its connect
    /// answer (H.264, legacy FLV, counts as confirmed), else the first with a
    /// `codecNotConfirmed` warning. The push's own video is ``MediaSourceOptions/videoCodec``
    /// (the CLI makes it `.copy`: the source as it is when it is in the list, as H.264 is);
    /// every other codec of the list is encoded from the start at the video's size, once for
    /// all those outputs. Other outputs (SRT, HLS, WHIP) take the push's video. Empty or one
    /// codec: no choice.
    public var videoCodecPreference: [VideoCodec] = []
    /// How far ahead of a break known in advance its cue goes out (a second cue follows at the splice).
    public var cuePreroll: Duration = .seconds(4)
    /// Cues read from the input, the opportunities they open, and what fills them
    /// (alternate content, the fallback, which cues count).
    public var breaks = BreakOptions()
    /// How often a file input plays (once by default).
    public var looping: Looping = .once
    /// How the file is read: stream copy or transcode, encoder bitrates.
    public var media = MediaSourceOptions()
    /// A live (network) input's timeout, backup and fill (see `FailoverInput`).
    public var liveInput = LiveInputOptions()

    /// Upper bound for the TCP connect.
    public var connectTimeout: Duration = .seconds(5)
    /// Upper bound for each wait on the server during the handshake and the publish commands.
    public var responseTimeout: Duration = .seconds(5)
    /// A write blocked this long fails the connection with `sendDataTimeout` (reference: 3000 ms).
    public var sendDataTimeout: Duration = .milliseconds(3000)
    /// Reconnect attempts after a lost connection (reference: 5, range 0...100, or
    /// ``ReconnectPolicy/forever``).
    public var connectRetryCount = 5
    /// Wait before each reconnect attempt (reference: 1000 ms).
    public var connectRetryInterval: Duration = .milliseconds(1000)
    /// Each later wait is the previous one times this (1 = constant, as in the reference).
    public var connectRetryBackoff: Double = 1
    /// The longest wait between two attempts, however far the backoff has grown.
    public var connectRetryMaxInterval: Duration = .seconds(30)
    /// Each wait is shortened by a random part of up to this fraction (0...1; see ``ReconnectPolicy/jitter``).
    public var connectRetryJitter: Double = 0
    /// Whether a failed first connect is retried like a lost connection (with `retryScheduled`
    /// events) rather than ending the push with `connectFailed`. Channels do; a push does with
    /// `--retry-count forever`.
    public var retriesFirstConnect = false

    /// A 24/7 channel's retries: forever, from 1 s doubling up to 30 s, each wait shortened by
    /// up to a quarter at random, and the first connect too (its server may still be starting).
    public mutating func retryForever() {
        connectRetryCount = ReconnectPolicy.forever
        connectRetryInterval = .seconds(1)
        connectRetryBackoff = 2
        connectRetryMaxInterval = .seconds(30)
        connectRetryJitter = 0.25
        retriesFirstConnect = true
    }
    /// After a silent path death the server may still hold our previous publisher and answer
    /// every reconnect "already publishing" until its own idle timeout (nginx-rtmp:
    /// `drop_idle_publisher`, else 60 s of read timeout plus its ping check). Such answers do not
    /// spend `connectRetryCount`: LivePush keeps retrying for this long, then gives up with
    /// `reconnectFailed`. The first connect is never retried (`publishRejected`).
    public var staleSessionGrace: Duration = .seconds(90)
    /// The longest wait between two attempts while the server holds the previous session
    /// (the waits start at `connectRetryInterval` and grow 1.5 times per attempt up to this).
    public var staleSessionMaxInterval: Duration = .seconds(2)
    /// The TCP send buffer (`SO_SNDBUF`); nil keeps the system's. A modest buffer keeps the
    /// backlog in LivePush's send queue, where congestion is measured and the drop policy
    /// applies, instead of in the kernel where nobody can see or shed it.
    public var socketSendBufferBytes: Int? = 256 * 1024
    /// Outgoing RTMP chunk size; larger chunks cost less CPU and fewer headers than the default 128.
    public var chunkSize = 65536
    /// How `rtmps://` verifies the server: the system CAs by default, or ``TLSOptions/caFile``.
    public var tls = TLSOptions()

    /// The send queue holds at most this much media; see `SendQueue` for what is dropped when it is full.
    public var sendQueueMaxDuration: Duration = .seconds(2)
    /// The send queue's bound in bytes.
    public var sendQueueMaxBytes = 4 * 1024 * 1024

    /// Real-time pushes report `networkPoor` once this much media has waited in the send
    /// queue for half a second, and `networkRecovered` once it is back under the second value.
    public var networkPoorBacklog: Duration = .milliseconds(1000)
    /// Backlog under which `networkRecovered` is reported.
    public var networkRecoveredBacklog: Duration = .milliseconds(300)

    /// How the URL's auth_key or token expiry is read and how early it is reported.
    public var auth = AuthExpiryOptions()
    /// Interactive mode: the bearer token of the WHIP outputs (`http(s)://` URLs), sent as
    /// `Authorization: Bearer` to each endpoint's own origin only (not to a redirect or a session
    /// resource on another scheme, host or port) and never logged. When it is a JWT, `tokenWillExpire` comes 30 s
    /// before its `exp` and `tokenExpired` at it; `refreshPushURLToken(_:)` replaces it.
    public var whipToken: String?
    /// The bearer token of the HLS outputs that upload to an origin (`https://…/name.m3u8`): sent
    /// only to the playlist URL's own origin and only over https:// (with an http:// URL the
    /// output's connect fails), never logged.
    public var hlsToken: String?
    /// The wall clock that auth expiry is measured against (injectable for tests).
    public var wallClock: any WallClock = SystemWallClock()
    /// The monotonic clock the push's flow reads (engine, outputs, live inputs): one per push,
    /// injectable so that unit tests drive a piece of the flow without sleeping. The shared
    /// scheduling threads and the transports keep the process's own clock.
    var monotonicClock: any MonotonicClock = SystemMonotonicClock()

    /// An image (any format libavcodec decodes: PNG, JPEG, ...) pushed while paused, scaled
    /// to the output size, with silent audio. Setting one makes the push encode its video and
    /// audio (the image and the silence must share the stream's codec settings).
    public var pauseImage: String?
    /// Frames per second of the pause image: low, since the picture does not change.
    public var pauseImageFrameRate: Double = 5

    /// An http(s) background music or sound effect that delivers no data for this long ends with
    /// `bgmDownloadTimeout` (0x30010502); the push goes on without it.
    public var bgmDownloadTimeout: Duration = .seconds(5)

    /// Also write the push to this local FLV file (created or truncated at `start`). It records
    /// what the source produced on the output clock, so it goes on while the network is down.
    /// A file that cannot be created fails `start` with `recordFailed`; a later write error is an
    /// `sdkError` with that code, and the push goes on.
    public var recordPath: String?
    /// Never truncate or write through a file at ``recordPath``: the recording is created anew
    /// (`O_EXCL | O_NOFOLLOW`), at the first free name of `NAME.flv`, `NAME-1.flv`, `NAME-2.flv`…
    /// Channels set it, so a restart or an added output never overwrites what was recorded.
    public var recordKeepsExisting = false

    /// Period of the `stats` event (reference: 2 s). Zero disables periodic statistics.
    public var statsInterval: Duration = .seconds(2)

    /// The queue on which delegate methods are called, in event order. A private serial
    /// queue by default; pass `.main` for UI apps.
    public var callbackQueue: DispatchQueue = DispatchQueue(label: "livepush.callbacks")

    /// Creates the default configuration.
    public init() {}
}

extension PushConfig {
    /// The cue format of output `id`.
    func cueFormat(forOutput id: Int) -> CueFormat {
        id < outputCueFormats.count ? outputCueFormats[id] : cueFormat
    }
}

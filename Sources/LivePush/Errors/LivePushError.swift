/// The one error type LivePush throws and reports.
///
/// Every error carries a stable numeric ``Code`` (the numbers of the reference mobile push SDK
/// where the meaning is the same, LivePush's own in the same style otherwise) and a sentence
/// that says what went wrong. `detail` adds the specific cause; it never contains secrets
/// such as a full `auth_key` (see ``Redaction``).
public struct LivePushError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stable numeric code.
    public let code: Code
    /// The specific cause, e.g. the path that was not found or the server's status code.
    public let detail: String?

    /// Creates an error with a code and an optional detail.
    public init(_ code: Code, _ detail: String? = nil) {
        self.code = code
        self.detail = detail
    }

    /// The sentence that describes the code, followed by the detail.
    public var message: String {
        guard let detail, !detail.isEmpty else { return code.sentence }
        return "\(code.sentence) (\(detail))"
    }

    public var description: String {
        "LivePushError \(code.rawValue) [\(code.hex)] \(code.name): \(message)"
    }
}

extension LivePushError {
    /// Stable numeric codes. The raw value is what the reference SDK's `onSDKError` would report.
    public enum Code: Int, Sendable, CaseIterable, Codable {
        // Reference SDK codes (push lifecycle)
        /// The pusher is in a state that does not allow this operation.
        case invalidState = 0x3002_0901
        /// The push URL could not be set up for the RTMP session.
        case urlSetupFailed = 0x3002_0902
        /// Connecting to the server (RTMP or SRT) failed (timeout or other socket error; an SRT peer that never answers).
        case connectFailed = 0x3002_0903
        /// The RTMP stream could not be published.
        case publishFailed = 0x3002_0904
        /// The push URL is not a valid rtmp:// or rtmps:// URL with an app and a stream name, nor an srt:// URL with a port and known options, nor an HLS playlist URL (.m3u8) with known options.
        case invalidURL = 0x3002_0905
        /// Reconnecting failed after all retries were used.
        case reconnectFailed = 0x3002_0906
        /// Sending data timed out: the server stopped accepting data.
        case sendDataTimeout = 0x3002_0907
        /// Starting the push timed out (no `NetStream.Publish.Start`).
        case startPushTimeout = 0x3002_0908
        // Reference SDK codes (system)
        /// The RTMP session could not be started.
        case rtmpStartFailed = 0x3001_0900
        /// Out of memory.
        case outOfMemory = 0x3001_0901
        // Reference SDK codes (quality)
        /// The network is too poor to sustain the push.
        case networkTooPoor = 0x3002_0301
        /// Adjusting the encoder bitrate failed.
        case bitrateAdjustFailed = 0x3002_0302
        /// Encoding or filtering cannot keep up with real time.
        case lowPerformance = 0x3002_0303
        // Reference SDK codes (inputs)
        /// The video input could not be opened.
        case videoInputOpenFailed = 0x1000_5003
        /// The audio input could not be opened.
        case audioInputOpenFailed = 0x1000_5004
        /// The background music could not be opened.
        case bgmOpenFailed = 0x3001_0501
        /// Downloading the background music timed out.
        case bgmDownloadTimeout = 0x3001_0502
        // LivePush: specific connect failures (0x300209xx continues the reference's push range)
        /// The server refused the connection.
        case connectionRefused = 0x3002_0909
        /// The RTMP server's host name could not be resolved.
        case hostNotFound = 0x3002_090A
        /// The RTMP handshake with the server failed or timed out.
        case handshakeFailed = 0x3002_090B
        /// The server rejected the connection (the RTMP connect command, or the SRT handshake).
        case connectRejected = 0x3002_090C
        /// The RTMP server rejected the publish (bad stream name, already publishing or not allowed).
        case publishRejected = 0x3002_090D
        /// The push URL's auth_key has expired.
        case authExpired = 0x3002_090E
        /// The connection to the server was lost.
        case connectionLost = 0x3002_090F
        /// The rtmps:// server's certificate could not be verified, so nothing of the stream (not even its key) was sent.
        case tlsVerificationFailed = 0x3002_0910
        /// The server asked the push to reconnect (Enhanced RTMP v2) and the request was refused (its tcUrl named another host, a cleartext move of an rtmps:// push, or no valid URL) or its new connection failed; the push goes on over its connection.
        case reconnectRequestFailed = 0x3002_0918
        // LivePush codes (Enhanced RTMP warnings: the push goes on)
        /// The RTMP server did not confirm the video codec sent (Enhanced RTMP's connect answer named no such FourCC); it is sent anyway.
        case codecNotConfirmed = 0x3002_0B01
        /// The RTMP server did not advertise multitrack video (E-RTMP v2 `capsEx`): of the output's ladder, only the first rendition (track 0) is sent, unless ``RTMPMultitrack/always``.
        case multitrackNotConfirmed = 0x3002_0B02
        // LivePush: media input (0x300301xx)
        /// The media file does not exist or cannot be read.
        case fileNotFound = 0x3003_0101
        /// The file is not a media file that can be demuxed.
        case notMedia = 0x3003_0102
        /// The media file has no audio or video stream that can be pushed.
        case noUsableStream = 0x3003_0103
        /// The media file uses a codec that can be neither copied nor decoded.
        case unsupportedCodec = 0x3003_0104
        /// The encoder needed for transcoding (H.264 or AAC) is not available.
        case encoderUnavailable = 0x3003_0105
        /// Reading the media file failed.
        case mediaReadFailed = 0x3003_0106
        /// Decoding or re-encoding the media failed.
        case transcodeFailed = 0x3003_0107
        /// A live input delivered no media for its input timeout; the backup or the slate stands in while it is retried.
        case inputLost = 0x3003_0108
        // LivePush: raw-frame processing (0x300302xx)
        /// A video filter failed; it was removed and the push goes on without it.
        case filterFailed = 0x3003_0201
        /// The image (pause image or watermark) could not be opened or decoded.
        case imageOpenFailed = 0x3003_0202
        // LivePush: outputs other than the RTMP connection (0x300303xx)
        /// The local recording could not be written; the push goes on without it.
        case recordFailed = 0x3003_0301
        /// An HLS output's segment or playlist could not be stored (its file:// directory, or the origin it uploads to); the output reconnects by its policy and writes it again.
        case hlsWriteFailed = 0x3003_0302
        // LivePush: playout (0x300304xx)
        /// The playout schedule (or a clip sent to a running channel) is not valid; nothing was pushed or changed.
        case scheduleInvalid = 0x3003_0401
        /// A playout entry could not be played; the slate filled its time and the channel went on.
        case playoutEntryFailed = 0x3003_0402
        /// The control request is not valid; nothing was changed.
        case controlRequestInvalid = 0x3003_0403
        /// A schedule entry (or a clip sent to a running channel) has a field LivePush does not know; nothing was pushed or changed.
        case scheduleFieldUnknown = 0x3003_0404
        /// The programme guide (XMLTV) or the as-run log could not be written; the channel goes on.
        case scheduleExportFailed = 0x3003_0405
        // Cues and breaks (issue 13)
        /// A cue read from the input is malformed or fails its CRC; it was ignored and the push goes on.
        case cueInvalid = 0x3003_0501
        /// A content resolver failed or timed out on a placement opportunity; the fallback filled it.
        case opportunityUnresolved = 0x3003_0502
        /// The break options are not valid (alternate content, fallback or subscribed cues); nothing was pushed.
        case breakSetupInvalid = 0x3003_0503
        // Channels (issue 14)
        /// The channel configuration is not valid; nothing was started or changed.
        case channelConfigInvalid = 0x3003_0601
        /// There is no channel (or output) with this id.
        case channelNotFound = 0x3003_0602
        /// The control API needs the bearer token.
        case unauthorized = 0x3003_0603
        // Hostile callers (issue 21)
        /// The control API would listen beyond loopback without a token; give one (LIVEPUSH_CONTROL_TOKEN) or bind 127.0.0.1.
        case controlUnprotected = 0x3003_0604
        /// The request came from another origin or named another host (a web page or DNS rebinding); nothing was changed.
        case controlForbidden = 0x3003_0605
        /// The control API takes bodies as Content-Type: application/json only; nothing was changed.
        case controlMediaTypeUnsupported = 0x3003_0606
        /// The path is outside the media root, or not a regular file; nothing was read or written.
        case pathOutsideMediaRoot = 0x3003_0607
        /// The control API's caller may not use this input (its scheme, host, port or listening is not in the configuration's apiInputs); nothing was opened.
        case inputNotAllowed = 0x3003_0608

        /// The per-output settings are not valid (no output with that id, or a video size or bitrate out of range); nothing was pushed.
        case outputSettingsInvalid = 0x3003_0701
        // LivePush: sound processing (0x300308xx)
        /// The loudness settings are not valid (a target outside -70...-5 LUFS, or a true-peak ceiling outside -9...0 dBTP); nothing was pushed.
        case loudnessSettingsInvalid = 0x3003_0901

        // Live overlays (0x300308xx)
        /// The overlay is not valid (its id, text, image, position, size, opacity or fade is out of bounds, its id is taken, or the push has as many overlays as it may); nothing was changed.
        case overlayInvalid = 0x3003_0801
        /// There is no overlay with this id on the push.
        case overlayNotFound = 0x3003_0802
        /// No font could be found or loaded for a text overlay (install fonts-dejavu-core, or fontconfig's configuration names none).
        case fontUnavailable = 0x3003_0803

        // Interactive mode: WHIP (WebRTC) outputs (0x30020Axx, beside the push range)
        /// The WHIP endpoint refused the bearer token (401 or 403): give a valid one.
        case tokenInvalid = 0x3002_0A01
        /// The WHIP endpoint (or its session resource) does not exist (404).
        case whipEndpointNotFound = 0x3002_0A02
        /// The WHIP endpoint failed or answered what WHIP does not allow (5xx, or no SDP answer).
        case whipServerError = 0x3002_0A03
        /// ICE found no working path to the WebRTC peer.
        case iceFailed = 0x3002_0A04
        /// The DTLS handshake with the WebRTC peer failed, so no media could be encrypted to it.
        case dtlsFailed = 0x3002_0A05
        /// The WHIP endpoint or the WebRTC connection did not answer in time.
        case whipTimeout = 0x3002_0A06
        /// The push token has expired: restart the push with a new URL or token.
        case tokenExpired = 0x3002_0A07
        /// A WHIP output needs GStreamer at run time and a library or plugin of it is missing: the detail names the file or element and the Debian package that provides it.
        case webrtcUnavailable = 0x3002_0A08

        /// The code in hex, as `0x30020903`.
        public var hex: String {
            let digits = String(rawValue, radix: 16)
            return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
        }

        /// The case's name, as `connectFailed`.
        public var name: String { String(describing: self) }

        /// One sentence, stable, suitable for a user-facing message.
        public var sentence: String {
            switch self {
            case .invalidState: "The pusher is in a state that does not allow this operation."
            case .urlSetupFailed: "The push URL could not be set up for the RTMP session."
            case .connectFailed: "Connecting to the server (RTMP or SRT) failed."
            case .publishFailed: "The RTMP stream could not be published."
            case .invalidURL: "The push URL is not a valid rtmp:// or rtmps:// URL with an app and a stream name, nor an srt:// URL with a port and known options, nor an HLS playlist URL (.m3u8) with known options."
            case .reconnectFailed: "Reconnecting failed after all retries were used."
            case .sendDataTimeout: "Sending data timed out: the server stopped accepting data."
            case .startPushTimeout: "Starting the push timed out."
            case .rtmpStartFailed: "The RTMP session could not be started."
            case .outOfMemory: "Out of memory."
            case .networkTooPoor: "The network is too poor to sustain the push."
            case .bitrateAdjustFailed: "Adjusting the encoder bitrate failed."
            case .lowPerformance: "Encoding or filtering cannot keep up with real time."
            case .videoInputOpenFailed: "The video input could not be opened."
            case .audioInputOpenFailed: "The audio input could not be opened."
            case .bgmOpenFailed: "The background music could not be opened."
            case .bgmDownloadTimeout: "Downloading the background music timed out."
            case .connectionRefused: "The server refused the connection."
            case .hostNotFound: "The RTMP server's host name could not be resolved."
            case .handshakeFailed: "The RTMP handshake with the server failed or timed out."
            case .connectRejected: "The server rejected the connection (the RTMP connect command, or the SRT handshake)."
            case .publishRejected: "The RTMP server rejected the publish (bad stream name, already publishing or not allowed)."
            case .authExpired: "The push URL's auth_key has expired."
            case .connectionLost: "The connection to the server was lost."
            case .reconnectRequestFailed: "The server asked the push to reconnect (Enhanced RTMP v2) and the request was refused (its tcUrl named another host, a cleartext move of an rtmps:// push, or no valid URL) or its new connection failed; the push goes on over its connection."
            case .tlsVerificationFailed: "The rtmps:// server's certificate could not be verified, so nothing of the stream (not even its key) was sent."
            case .codecNotConfirmed: "The RTMP server did not confirm the video codec sent (Enhanced RTMP); it is sent anyway, and a server that cannot read it records no picture."
            case .multitrackNotConfirmed: "The RTMP server did not advertise multitrack video (Enhanced RTMP v2 capsEx): it gets the first rendition of the output's ladder only, unless multitrack is asked for always."
            case .fileNotFound: "The media file does not exist or cannot be read."
            case .notMedia: "The file is not a media file that can be demuxed."
            case .noUsableStream: "The media file has no audio or video stream that can be pushed."
            case .unsupportedCodec: "The media file uses a codec that can be neither copied nor decoded."
            case .encoderUnavailable: "The encoder needed for transcoding (H.264 or AAC) is not available."
            case .mediaReadFailed: "Reading the media file failed."
            case .inputLost: "A live input delivered no media for its input timeout; the backup or the slate stands in while it is retried."
            case .transcodeFailed: "Decoding or re-encoding the media failed."
            case .filterFailed: "A video filter failed; it was removed and the push goes on without it."
            case .imageOpenFailed: "The image (pause image or watermark) could not be opened or decoded."
            case .recordFailed: "The local recording could not be written; the push goes on without it."
            case .hlsWriteFailed: "An HLS output's segment or playlist could not be stored; the output reconnects by its policy and writes it again."
            case .scheduleInvalid: "The playout schedule (or a clip sent to a running channel) is not valid; nothing was pushed or changed."
            case .playoutEntryFailed: "A playout entry could not be played; the slate filled its time and the channel went on."
            case .controlRequestInvalid: "The control request is not valid; nothing was changed."
            case .scheduleFieldUnknown: "A schedule entry (or a clip sent to a running channel) has a field LivePush does not know; nothing was pushed or changed."
            case .scheduleExportFailed: "The programme guide (XMLTV) or the as-run log could not be written; the channel goes on."
            case .cueInvalid: "A cue read from the input is malformed or fails its CRC; it was ignored and the push goes on."
            case .opportunityUnresolved: "A content resolver failed or timed out on a placement opportunity; the fallback filled it."
            case .breakSetupInvalid: "The break options are not valid (alternate content, fallback or subscribed cues); nothing was pushed."
            case .channelConfigInvalid: "The channel configuration is not valid; nothing was started or changed."
            case .channelNotFound: "There is no channel (or output) with this id."
            case .unauthorized: "The control API needs the bearer token."
            case .controlUnprotected: "The control API would listen beyond loopback without a token; give one (LIVEPUSH_CONTROL_TOKEN) or bind 127.0.0.1."
            case .controlForbidden: "The request came from another origin or named another host (a web page or DNS rebinding); nothing was changed."
            case .controlMediaTypeUnsupported: "The control API takes bodies as Content-Type: application/json only; nothing was changed."
            case .pathOutsideMediaRoot: "The path is outside the media root, or not a regular file; nothing was read or written."
            case .inputNotAllowed: "The control API's caller may not use this input (its scheme, host, port or listening is not in the configuration's apiInputs); nothing was opened."
            case .tokenInvalid: "The WHIP endpoint refused the bearer token (401 or 403): give a valid one."
            case .whipEndpointNotFound: "The WHIP endpoint (or its session resource) does not exist (404)."
            case .whipServerError: "The WHIP endpoint failed or answered what WHIP does not allow (5xx, or no SDP answer)."
            case .iceFailed: "ICE found no working path to the WebRTC peer."
            case .dtlsFailed: "The DTLS handshake with the WebRTC peer failed, so no media could be encrypted to it."
            case .whipTimeout: "The WHIP endpoint or the WebRTC connection did not answer in time."
            case .tokenExpired: "The push token has expired: restart the push with a new URL or token."
            case .webrtcUnavailable: "A WHIP output needs GStreamer at run time and a library or plugin of it is missing: the detail names the file or element and the Debian package that provides it."
            case .overlayInvalid: "The overlay is not valid (its id, text, image, position, size, opacity or fade is out of bounds, its id is taken, or the push has as many overlays as it may); nothing was changed."
            case .overlayNotFound: "There is no overlay with this id on the push."
            case .fontUnavailable: "No font could be found or loaded for a text overlay (install fonts-dejavu-core, or fontconfig's configuration names none)."
            case .outputSettingsInvalid: "The per-output settings are not valid (no output with that id, or a video size or bitrate out of range); nothing was pushed."
            case .loudnessSettingsInvalid: "The loudness settings are not valid (a target outside -70...-5 LUFS, or a true-peak ceiling outside -9...0 dBTP); nothing was pushed."
            }
        }
    }
}

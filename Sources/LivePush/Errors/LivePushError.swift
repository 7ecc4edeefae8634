/// The one error type LivePush throws and reports.
///
/// Every error carries a stable numeric ``Code`` (the numbers of the reference mobile push SDK
/// where the meaning is the same, LivePush's own in the same style otherwise) and a sentence
/// that says what went wrong. `detail` adds the specific cause; it never contains secrets
/// such as a full `auth_key` (see ``Redaction``).
public struct LivePushError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Code
    /// The specific cause, e.g. the path that was not found or the server's status code.
    public let detail: String?

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
        case invalidState = 0x3002_0901
        case urlSetupFailed = 0x3002_0902
        case connectFailed = 0x3002_0903
        case publishFailed = 0x3002_0904
        case invalidURL = 0x3002_0905
        case reconnectFailed = 0x3002_0906
        case sendDataTimeout = 0x3002_0907
        case startPushTimeout = 0x3002_0908
        // Reference SDK codes (system)
        case rtmpStartFailed = 0x3001_0900
        case outOfMemory = 0x3001_0901
        // Reference SDK codes (quality)
        case networkTooPoor = 0x3002_0301
        case bitrateAdjustFailed = 0x3002_0302
        case lowPerformance = 0x3002_0303
        // Reference SDK codes (inputs)
        case videoInputOpenFailed = 0x1000_5003
        case audioInputOpenFailed = 0x1000_5004
        case bgmOpenFailed = 0x3001_0501
        case bgmDownloadTimeout = 0x3001_0502
        // LivePush: specific connect failures (0x300209xx continues the reference's push range)
        case connectionRefused = 0x3002_0909
        case hostNotFound = 0x3002_090A
        case handshakeFailed = 0x3002_090B
        case connectRejected = 0x3002_090C
        case publishRejected = 0x3002_090D
        case authExpired = 0x3002_090E
        case connectionLost = 0x3002_090F
        case tlsVerificationFailed = 0x3002_0910
        // LivePush: media input (0x300301xx)
        case fileNotFound = 0x3003_0101
        case notMedia = 0x3003_0102
        case noUsableStream = 0x3003_0103
        case unsupportedCodec = 0x3003_0104
        case encoderUnavailable = 0x3003_0105
        case mediaReadFailed = 0x3003_0106
        case transcodeFailed = 0x3003_0107
        case inputLost = 0x3003_0108
        // LivePush: raw-frame processing (0x300302xx)
        case filterFailed = 0x3003_0201
        case imageOpenFailed = 0x3003_0202
        // LivePush: outputs other than the RTMP connection (0x300303xx)
        case recordFailed = 0x3003_0301
        // LivePush: playout (0x300304xx)
        case scheduleInvalid = 0x3003_0401
        case playoutEntryFailed = 0x3003_0402
        case controlRequestInvalid = 0x3003_0403
        // Cues and breaks (issue 13)
        case cueInvalid = 0x3003_0501
        case opportunityUnresolved = 0x3003_0502
        case breakSetupInvalid = 0x3003_0503
        // Channels (issue 14)
        case channelConfigInvalid = 0x3003_0601
        case channelNotFound = 0x3003_0602
        case unauthorized = 0x3003_0603
        // Hostile callers (issue 21)
        case controlUnprotected = 0x3003_0604
        case controlForbidden = 0x3003_0605
        case controlMediaTypeUnsupported = 0x3003_0606
        case pathOutsideMediaRoot = 0x3003_0607

        case outputSettingsInvalid = 0x3003_0701

        // Interactive mode: WHIP (WebRTC) outputs (0x30020Axx, beside the push range)
        case tokenInvalid = 0x3002_0A01
        case whipEndpointNotFound = 0x3002_0A02
        case whipServerError = 0x3002_0A03
        case iceFailed = 0x3002_0A04
        case dtlsFailed = 0x3002_0A05
        case whipTimeout = 0x3002_0A06
        case tokenExpired = 0x3002_0A07

        public var hex: String {
            let digits = String(rawValue, radix: 16)
            return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
        }

        public var name: String { String(describing: self) }

        /// One sentence, stable, suitable for a user-facing message.
        public var sentence: String {
            switch self {
            case .invalidState: "The pusher is in a state that does not allow this operation."
            case .urlSetupFailed: "The push URL could not be set up for the RTMP session."
            case .connectFailed: "Connecting to the server (RTMP or SRT) failed."
            case .publishFailed: "The RTMP stream could not be published."
            case .invalidURL: "The push URL is not a valid rtmp:// or rtmps:// URL with an app and a stream name, nor an srt:// URL with a port and known options."
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
            case .tlsVerificationFailed: "The rtmps:// server's certificate could not be verified, so nothing of the stream (not even its key) was sent."
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
            case .scheduleInvalid: "The playout schedule (or a clip sent to a running channel) is not valid; nothing was pushed or changed."
            case .playoutEntryFailed: "A playout entry could not be played; the slate filled its time and the channel went on."
            case .controlRequestInvalid: "The control request is not valid; nothing was changed."
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
            case .tokenInvalid: "The WHIP endpoint refused the bearer token (401 or 403): give a valid one."
            case .whipEndpointNotFound: "The WHIP endpoint (or its session resource) does not exist (404)."
            case .whipServerError: "The WHIP endpoint failed or answered what WHIP does not allow (5xx, or no SDP answer)."
            case .iceFailed: "ICE found no working path to the WebRTC peer."
            case .dtlsFailed: "The DTLS handshake with the WebRTC peer failed, so no media could be encrypted to it."
            case .whipTimeout: "The WHIP endpoint or the WebRTC connection did not answer in time."
            case .tokenExpired: "The push token has expired: restart the push with a new URL or token."
            case .outputSettingsInvalid: "The per-output settings are not valid (no output with that id, or a video size or bitrate out of range); nothing was pushed."
            }
        }
    }
}

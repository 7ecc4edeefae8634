/// When an RTMP output with a ladder sends it as Enhanced RTMP v2 multitrack video
/// (``PushConfig/rtmpMultitrack``).
public enum RTMPMultitrack: String, Sendable, Equatable, CaseIterable {
    /// To a server whose connect answer has `capsEx`'s multitrack bit (0x02); any other gets the
    /// ladder's first rendition (track 0) only, with a `multitrackNotConfirmed` warning.
    case whenAdvertised = "auto"
    /// To every server, with a `multitrackNotConfirmed` warning when it did not advertise it:
    /// for servers that read multitrack without saying so (FFmpeg 8's listener answers
    /// `connect` with no `capsEx`), as OBS does for a service whose configuration says so.
    case always
}

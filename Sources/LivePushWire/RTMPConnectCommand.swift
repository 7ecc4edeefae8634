/// The `connect` command a publisher sends, built here rather than by librtmp when it must say
/// more than librtmp can: Enhanced RTMP's `fourCcList`, a strict array of the video codecs the
/// client will send, which librtmp's `conn=` options (appended arguments, no strict arrays)
/// cannot express. OBS carries a patched librtmp for the same reason.
public struct RTMPConnectCommand: Sendable, Equatable {
    public var app: String
    public var tcUrl: String
    public var flashVersion = "FMLE/3.0 (compatible; LivePush)"
    /// FourCCs (`hvc1`, `av01`, `vp09`): Enhanced RTMP v1's announcement.
    public var fourCcList: [String]

    public init(app: String, tcUrl: String, fourCcList: [String]) {
        self.app = app
        self.tcUrl = tcUrl
        self.fourCcList = fourCcList
    }

    /// The AMF0 body: `"connect"`, transaction 1 (librtmp numbers it so, and matches the
    /// `_result` by it), the command object.
    public var body: [UInt8] {
        var properties = [
            AMF0Property("app", .string(app)),
            AMF0Property("type", .string("nonprivate")),
            AMF0Property("flashVer", .string(flashVersion)),
            AMF0Property("tcUrl", .string(tcUrl)),
        ]
        if !fourCcList.isEmpty {
            properties.append(AMF0Property("fourCcList", .strictArray(fourCcList.map(AMF0Value.string))))
        }
        return AMF0.encode([.string("connect"), .number(1), .object(properties)])
    }
}

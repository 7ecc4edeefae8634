/// The `connect` command a publisher sends, built here rather than by librtmp because it says
/// more than librtmp can: Enhanced RTMP's `fourCcList` (a strict array), and v2's
/// `videoFourCcInfoMap` (an object) and `capsEx`, which librtmp's `conn=` options (appended
/// arguments, no strict arrays, no nested objects) cannot express. OBS carries a patched
/// librtmp for the same reason.
public struct RTMPConnectCommand: Sendable, Equatable {
    public var app: String
    public var tcUrl: String
    public var flashVersion = "FMLE/3.0 (compatible; LivePush)"
    /// FourCCs (`avc1`, `hvc1`, `av01`, `vp09`) the client may send on this connection, in its
    /// order of preference: Enhanced RTMP v1's announcement. Empty: left out.
    public var fourCcList: [String]
    /// E-RTMP v2: per FourCC, what the client can do with it
    /// (``EnhancedRTMPCapabilities/FourCcInfo`` bits), in this order. Empty: left out.
    public var videoFourCcInfoMap: [(fourCC: String, info: UInt32)]
    /// E-RTMP v2 `capsEx` (``EnhancedRTMPCapabilities/CapsEx`` bits); nil: left out.
    public var capsEx: UInt32?

    public init(app: String, tcUrl: String, fourCcList: [String],
                videoFourCcInfoMap: [(fourCC: String, info: UInt32)] = [], capsEx: UInt32? = nil) {
        self.app = app
        self.tcUrl = tcUrl
        self.fourCcList = fourCcList
        self.videoFourCcInfoMap = videoFourCcInfoMap
        self.capsEx = capsEx
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.app == rhs.app && lhs.tcUrl == rhs.tcUrl && lhs.flashVersion == rhs.flashVersion && lhs.fourCcList == rhs.fourCcList
            && lhs.videoFourCcInfoMap.elementsEqual(rhs.videoFourCcInfoMap, by: { $0 == $1 }) && lhs.capsEx == rhs.capsEx
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
        if !videoFourCcInfoMap.isEmpty {
            properties.append(AMF0Property("videoFourCcInfoMap",
                                           .object(videoFourCcInfoMap.map { AMF0Property($0.fourCC, .number(Double($0.info))) })))
        }
        if let capsEx { properties.append(AMF0Property("capsEx", .number(Double(capsEx)))) }
        return AMF0.encode([.string("connect"), .number(1), .object(properties)])
    }
}

/// What an Enhanced RTMP v2 server says it takes, in its `connect` `_result` (veovera E-RTMP v2,
/// "Enhancing NetConnection connect Command"): `fourCcList`, `videoFourCcInfoMap`,
/// `audioFourCcInfoMap` and `capsEx`.
///
/// A server's answer is untrusted: at most ``maxEntries`` FourCCs per list or map are kept, a
/// FourCC is four printable ASCII characters (or the wildcard `*`), a mask is a whole number
/// in 0...255; anything else is left out.
public struct EnhancedRTMPCapabilities: Sendable, Equatable {
    /// `capsEx` bits (E-RTMP v2 `CapsExMask`).
    public enum CapsEx {
        public static let reconnect: UInt32 = 0x01
        public static let multitrack: UInt32 = 0x02
        public static let modEx: UInt32 = 0x04
        public static let timestampNanoOffset: UInt32 = 0x08
    }

    /// `FourCcInfoMask` bits of the info maps' values.
    public enum FourCcInfo {
        public static let canDecode: UInt32 = 0x01
        public static let canEncode: UInt32 = 0x02
        public static let canForward: UInt32 = 0x04
    }

    /// How many FourCCs of one list or map are kept.
    public static let maxEntries = 32

    /// `fourCcList` (v1): the codecs the server takes; nil when it named none.
    public var fourCcList: [String]?
    /// `videoFourCcInfoMap` (v2): FourCC (or `*`) to its `FourCcInfo` bits; nil when absent.
    public var videoFourCcInfoMap: [String: UInt32]?
    /// `audioFourCcInfoMap` (v2), as ``videoFourCcInfoMap``.
    public var audioFourCcInfoMap: [String: UInt32]?
    /// `capsEx`; nil when absent.
    public var capsEx: UInt32?

    public init(fourCcList: [String]? = nil, videoFourCcInfoMap: [String: UInt32]? = nil,
                audioFourCcInfoMap: [String: UInt32]? = nil, capsEx: UInt32? = nil) {
        self.fourCcList = fourCcList
        self.videoFourCcInfoMap = videoFourCcInfoMap
        self.audioFourCcInfoMap = audioFourCcInfoMap
        self.capsEx = capsEx
    }

    /// Reads the first of each field found in `objects` (a reply's command and info objects);
    /// nil when none of them is there (a legacy server).
    public init?(objects: [[AMF0Property]]) {
        func first(_ key: String) -> AMF0Value? {
            for object in objects { if let found = object.first(where: { $0.key == key }) { return found.value } }
            return nil
        }
        if case .strictArray(let values)? = first("fourCcList") {
            fourCcList = Array(values.lazy.compactMap(\.stringValue).filter(Self.isFourCC).prefix(Self.maxEntries))
        }
        videoFourCcInfoMap = first("videoFourCcInfoMap").flatMap(Self.infoMap)
        audioFourCcInfoMap = first("audioFourCcInfoMap").flatMap(Self.infoMap)
        capsEx = first("capsEx")?.numberValue.flatMap(Self.mask)
        if fourCcList == nil && videoFourCcInfoMap == nil && audioFourCcInfoMap == nil && capsEx == nil { return nil }
    }

    /// Whether the server says it takes video `fourCC`: named in `fourCcList`, or in
    /// `videoFourCcInfoMap` (itself or `*`) with any bit set.
    public func confirmsVideo(_ fourCC: String) -> Bool { confirms(fourCC, infoMap: videoFourCcInfoMap) }

    /// Whether the server confirmed the audio codec `fourCC` (`Opus`): in `fourCcList`, or with
    /// a non-zero `audioFourCcInfoMap` entry (or the `*` wildcard in either).
    public func confirmsAudio(_ fourCC: String) -> Bool { confirms(fourCC, infoMap: audioFourCcInfoMap) }

    /// In `fourCcList`, or with a non-zero entry in the track's info map (or `*` in either).
    private func confirms(_ fourCC: String, infoMap: [String: UInt32]?) -> Bool {
        if fourCcList?.contains(fourCC) == true || fourCcList?.contains("*") == true { return true }
        guard let map = infoMap else { return false }
        return (map[fourCC] ?? 0) != 0 || (map["*"] ?? 0) != 0
    }

    /// Whether `capsEx` has `bit`.
    public func has(_ bit: UInt32) -> Bool { (capsEx ?? 0) & bit != 0 }

    /// Four printable ASCII characters, or the wildcard.
    static func isFourCC(_ text: String) -> Bool {
        text == "*" || (text.utf8.count == 4 && text.utf8.allSatisfy { (0x20...0x7E).contains($0) })
    }

    static func mask(_ number: Double) -> UInt32? {
        guard number.isFinite, number >= 0, number <= 0xFFFF_FFFF, number == number.rounded() else { return nil }
        return UInt32(number)
    }

    private static func infoMap(_ value: AMF0Value) -> [String: UInt32]? {
        guard let properties = value.properties else { return nil }
        var map: [String: UInt32] = [:]
        for property in properties where isFourCC(property.key) {
            guard map.count < maxEntries else { break }
            if let bits = property.value.numberValue.flatMap(mask) { map[property.key] = bits }
        }
        return map
    }
}

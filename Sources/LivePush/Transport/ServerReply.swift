import CRTMP
import LivePushWire

/// A command message from the server (`_result`, `_error`, `onStatus`), decoded from AMF.
///
/// librtmp handles these too but only logs failures; reading them here maps each to the
/// specific LivePush code (connect rejected vs. publish rejected) with the server's own words.
struct ServerReply {
    let name: String
    let transactionID: Double
    let level: String?
    let code: String?
    let serverDescription: String?

    init?(_ packet: RTMPPacket) {
        // 0x14: AMF0 command; 0x11: AMF3 command, whose body starts with a format byte.
        guard packet.m_packetType == 0x14 || packet.m_packetType == 0x11, let body = packet.m_body else { return nil }
        let skip = packet.m_packetType == 0x11 ? 1 : 0
        let count = Int(packet.m_nBodySize)
        guard count > skip else { return nil }
        let bytes = UnsafeRawBufferPointer(start: body, count: count).dropFirst(skip)
        guard let values = try? AMF0.decode(Array(bytes)), case .string(let name)? = values.first else { return nil }
        self.name = name
        if values.count > 1, case .number(let id) = values[1] { transactionID = id } else { transactionID = 0 }
        var info: [AMF0Property] = []
        for value in values.dropFirst(2) {
            if case .object(let properties) = value { info = properties }
            if case .ecmaArray(let properties) = value { info = properties }
        }
        func string(_ key: String) -> String? {
            for property in info where property.key == key {
                if case .string(let s) = property.value { return s }
            }
            return nil
        }
        level = string("level")
        code = string("code")
        serverDescription = string("description")
    }

    /// librtmp numbers the connect command's transaction 1.
    var isConnectResult: Bool { name == "_result" && transactionID == 1 }

    /// The error this reply means, if any.
    func error(connectAccepted: Bool) -> LivePushError? {
        let detail = [code, serverDescription].compactMap { $0 }.joined(separator: ": ")
        switch name {
        case "_error":
            if !connectAccepted || code?.hasPrefix("NetConnection.Connect") == true {
                return LivePushError(.connectRejected, detail.isEmpty ? "_error" : Redaction.redactURL(detail))
            }
            return LivePushError(.publishRejected, detail.isEmpty ? "_error" : Redaction.redactURL(detail))
        case "onStatus":
            guard level == "error" || code?.hasSuffix(".Failed") == true || code?.hasSuffix(".Rejected") == true
                    || code?.hasSuffix(".BadName") == true else { return nil }
            if code?.hasPrefix("NetConnection.Connect") == true {
                return LivePushError(.connectRejected, Redaction.redactURL(detail))
            }
            return LivePushError(.publishRejected, Redaction.redactURL(detail))
        default:
            return nil
        }
    }
}

/// What a client needs from a server's reply to one of its commands (`_result`, `_error`,
/// `onStatus`): the name, the transaction it answers and the status fields of its info object.
///
/// Kept apart from librtmp's packet type so that the bytes a server sends can be decoded (and
/// fuzzed) without a connection.
public struct CommandReply: Sendable, Equatable {
    public var name: String
    public var transactionID: Double
    public var level: String?
    public var code: String?
    public var statusDescription: String?
    /// What an Enhanced RTMP server says it takes, in its connect `_result` (its command
    /// object's or info object's `fourCcList`, info maps and `capsEx`); nil when it names none
    /// of them (a legacy server).
    public var capabilities: EnhancedRTMPCapabilities?
    /// The codecs the server names in `fourCcList`; nil when it names none.
    public var fourCcList: [String]? { capabilities?.fourCcList }
    /// An Enhanced RTMP v2 `NetConnection.Connect.ReconnectRequest`'s new server (its info
    /// object's `tcUrl`), as the server wrote it; nil when absent.
    public var tcUrl: String?

    /// Decodes the body of a command message; nil for other message types and undecodable bodies.
    public init?(typeID: UInt8, body: some Collection<UInt8>) {
        guard typeID == RTMPMessageType.commandAMF0.rawValue || typeID == RTMPMessageType.commandAMF3.rawValue
        else { return nil }
        // Like librtmp, skip an AMF3 command's leading format byte whatever it holds.
        let skip = typeID == RTMPMessageType.commandAMF3.rawValue ? 1 : 0
        guard let values = try? AMF0.decode(body.dropFirst(skip)), let command = RTMPCommand(values: values)
        else { return nil }
        name = command.name
        transactionID = command.transactionID
        // Servers put the status in the last object after the transaction id (the command object
        // is usually null); some send it as an ECMA array.
        let info = ([command.commandObject] + command.arguments).last { $0.properties != nil }?.properties ?? []
        func string(_ key: String) -> String? {
            info.lazy.filter { $0.key == key }.compactMap(\.value.stringValue).first
        }
        level = string("level")
        code = string("code")
        statusDescription = string("description")
        tcUrl = string("tcUrl")
        let objects = ([command.commandObject] + command.arguments).compactMap(\.properties)
        capabilities = EnhancedRTMPCapabilities(objects: objects)
    }
}

/// One HTTP/1.1 response as ``HTTPResponseParser`` read it: what the WHIP client needs of it.
///
/// Header fields keep their order and their repetitions: a WHIP endpoint may send one `Link`
/// field per ICE server, and joining them would lose nothing but would make a quoted comma
/// ambiguous to whoever splits them again.
struct HTTPMessage: Sendable, Equatable {
    struct Field: Sendable, Equatable {
        /// As the server spelled it; compare with ``HTTPMessage/values(of:)``, which ignores case.
        var name: String
        /// Without the surrounding whitespace; a folded (obs-fold) value is joined with one space.
        var value: String
    }

    var status: Int
    var reason: String
    var fields: [Field]
    var body: [UInt8]

    /// The values of every field called `name` (compared without case, as RFC 9110 §5.1 says), in order.
    func values(of name: String) -> [String] {
        let wanted = name.lowercased()
        return fields.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The first value of the field `name`, or nil.
    func value(of name: String) -> String? { values(of: name).first }

    /// The body as text (an SDP answer is UTF-8 by RFC 8866).
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// The token of an interactive-mode push URL (`...?token=VALUE`).
///
/// Like an auth_key, a token lets its holder publish, so ``description`` masks it.
public struct PushToken: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The default query parameter that carries the token.
    public static let defaultParameterName = "token"

    /// The token exactly as it appears in the URL.
    public let value: String

    /// Wraps a token's text.
    public init(_ value: String) {
        self.value = value
    }

    /// The token carried by `url`'s `parameter`, nil when absent or empty.
    public init?(url: PushURL, parameter: String = PushToken.defaultParameterName) {
        guard let value = PushURLQuery.values(of: parameter, inQuery: url.query).first, !value.isEmpty else { return nil }
        self.value = value
    }

    /// `url` with its token replaced by `token` (or added), every other parameter kept:
    /// what `refreshPushURLToken(_:)` does to the current push URL.
    public static func replacing(
        in url: PushURL, with token: String, parameter: String = PushToken.defaultParameterName
    ) -> String {
        PushURLQuery.setting(parameter, to: token, inURL: url.rawValue)
    }

    public var description: String { Redaction.mask(value) }

    public var customMirror: Mirror {
        Mirror(self, children: ["value": Redaction.mask(value)], displayStyle: .struct)
    }
}

/// Tells when an interactive-mode push token expires.
///
/// Tokens are opaque to LivePush; by default (``expiryPrefix``) a token of the form
/// `<expiryUnixSeconds>-<anything>` expires at its leading number. For any other format pass
/// your own extractor, e.g. one that decodes a JWT's `exp`, or `{ _ in myKnownExpiry }`.
/// A token whose expiry cannot be read is not watched.
public struct PushTokenExpiry: Sendable {
    private let extract: @Sendable (String) -> Int64?

    /// `extract` receives the token exactly as it appears in the URL (not percent-decoded) and
    /// returns its expiry in Unix seconds, or nil when unknown.
    public init(_ extract: @escaping @Sendable (_ token: String) -> Int64?) {
        self.extract = extract
    }

    /// `<expiryUnixSeconds>-<anything>`: the digits before the first `-`.
    public static let expiryPrefix = PushTokenExpiry { token in
        guard let dash = token.firstIndex(of: "-") else { return nil }
        let digits = token[..<dash]
        guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(digits)
    }

    /// The token's expiry in Unix seconds, or nil when unknown.
    public func expiry(of token: String) -> Int64? { extract(token) }
}

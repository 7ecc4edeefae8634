import FoundationEssentials

/// Tells when an interactive-mode push token expires.
///
/// By default (``jwtOrExpiryPrefix``) a JWT expires at its `exp` claim, and a token of the form
/// `<expiryUnixSeconds>-<anything>` at its leading number. For any other format pass
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

    /// A JWT's `exp` claim (the payload, the second of three base64url parts, read as JSON).
    public static let jwt = PushTokenExpiry { token in
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Self.base64URLDecoded(parts[1]),
              case .object(let claims)? = try? JSONDecoder().decode(JSONField.self, from: Data(payload)),
              case .number(let exp)? = claims["exp"], exp.isFinite, exp > 0, exp < 1e15 else { return nil }
        return Int64(exp)
    }

    /// base64url without padding (RFC 7515), as JWTs carry their parts.
    static func base64URLDecoded(_ text: Substring) -> [UInt8]? {
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard).map(Array.init)
    }

    /// A JWT's `exp`, else ``expiryPrefix``: the default.
    public static let jwtOrExpiryPrefix = PushTokenExpiry { token in
        jwt.expiry(of: token) ?? expiryPrefix.expiry(of: token)
    }

    /// The token's expiry in Unix seconds, or nil when unknown.
    public func expiry(of token: String) -> Int64? { extract(token) }
}

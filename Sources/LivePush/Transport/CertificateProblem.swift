import CGnuTLS

/// Why a server certificate was refused, read from GnuTLS's verification status flags.
///
/// GnuTLS reports every problem it found at once (an untrusted certificate for the wrong
/// host sets both flags), so the detail of a `tlsVerificationFailed` names each of them, the
/// most fundamental first: a certificate nobody vouches for says nothing about its dates
/// or names.
enum CertificateProblem: Equatable, Sendable {
    case unknownIssuer
    case revoked
    case expired
    case notYetValid
    case nameMismatch
    /// Flags without a reason of their own (bad signature, insecure algorithm, issuer not a CA...).
    case other(status: UInt32)

    private static let named: [(flag: gnutls_certificate_status_t, problem: CertificateProblem)] = [
        (GNUTLS_CERT_SIGNER_NOT_FOUND, .unknownIssuer),
        (GNUTLS_CERT_REVOKED, .revoked),
        (GNUTLS_CERT_EXPIRED, .expired),
        (GNUTLS_CERT_NOT_ACTIVATED, .notYetValid),
        (GNUTLS_CERT_UNEXPECTED_OWNER, .nameMismatch),
    ]

    /// The problems `status` (a `gnutls_certificate_status_t` bit set) reports; empty for a valid certificate.
    static func problems(in status: UInt32) -> [CertificateProblem] {
        var problems = named.filter { status & $0.flag.rawValue != 0 }.map(\.problem)
        // GNUTLS_CERT_INVALID only summarises the others: it is set whenever any of them is.
        let known = named.reduce(GNUTLS_CERT_INVALID.rawValue) { $0 | $1.flag.rawValue }
        let rest = status & ~known
        if rest != 0 || (status != 0 && problems.isEmpty) { problems.append(.other(status: status)) }
        return problems
    }

    /// The reason as a phrase for an error's detail, e.g. "certificate does not name 127.0.0.1".
    func reason(host: String) -> String {
        switch self {
        case .unknownIssuer: "certificate signed by an unknown issuer"
        case .revoked: "certificate revoked"
        case .expired: "certificate expired"
        case .notYetValid: "certificate not yet valid"
        case .nameMismatch: "certificate does not name \(host)"
        case .other(let status): "certificate rejected (GnuTLS verification status 0x\(String(status, radix: 16)))"
        }
    }

    /// All reasons `status` gives, joined for an error's detail.
    static func describe(_ status: UInt32, host: String) -> String {
        let reasons = problems(in: status).map { $0.reason(host: host) }
        return reasons.isEmpty ? "certificate rejected" : reasons.joined(separator: "; ")
    }
}

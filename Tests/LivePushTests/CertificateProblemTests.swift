import CGnuTLS
import XCTest
@testable import LivePush

/// GnuTLS's verification status flags → the reasons a `tlsVerificationFailed` detail gives.
final class CertificateProblemTests: XCTestCase {
    private func status(_ flags: gnutls_certificate_status_t...) -> UInt32 {
        flags.reduce(0) { $0 | $1.rawValue }
    }

    func testEachFlagHasItsReason() {
        XCTAssertEqual(CertificateProblem.problems(in: status(GNUTLS_CERT_INVALID, GNUTLS_CERT_SIGNER_NOT_FOUND)), [.unknownIssuer])
        XCTAssertEqual(CertificateProblem.problems(in: status(GNUTLS_CERT_INVALID, GNUTLS_CERT_REVOKED)), [.revoked])
        XCTAssertEqual(CertificateProblem.problems(in: status(GNUTLS_CERT_INVALID, GNUTLS_CERT_EXPIRED)), [.expired])
        XCTAssertEqual(CertificateProblem.problems(in: status(GNUTLS_CERT_INVALID, GNUTLS_CERT_NOT_ACTIVATED)), [.notYetValid])
        XCTAssertEqual(CertificateProblem.problems(in: status(GNUTLS_CERT_INVALID, GNUTLS_CERT_UNEXPECTED_OWNER)), [.nameMismatch])
    }

    func testAValidCertificateHasNoProblem() {
        XCTAssertEqual(CertificateProblem.problems(in: 0), [])
    }

    func testSeveralProblemsAreAllNamedTheMostFundamentalFirst() {
        let flags = status(GNUTLS_CERT_INVALID, GNUTLS_CERT_UNEXPECTED_OWNER, GNUTLS_CERT_EXPIRED, GNUTLS_CERT_SIGNER_NOT_FOUND)
        XCTAssertEqual(CertificateProblem.problems(in: flags), [.unknownIssuer, .expired, .nameMismatch])
        XCTAssertEqual(CertificateProblem.describe(flags, host: "127.0.0.1"),
                       "certificate signed by an unknown issuer; certificate expired; certificate does not name 127.0.0.1")
    }

    func testFlagsWithoutAReasonOfTheirOwnAreReportedWithTheStatus() {
        let insecure = status(GNUTLS_CERT_INVALID, GNUTLS_CERT_INSECURE_ALGORITHM)
        XCTAssertEqual(CertificateProblem.problems(in: insecure), [.other(status: insecure)])
        XCTAssertEqual(CertificateProblem.describe(insecure, host: "h"), "certificate rejected (GnuTLS verification status 0x102)")
        // INVALID alone still means the certificate was refused.
        XCTAssertEqual(CertificateProblem.problems(in: status(GNUTLS_CERT_INVALID)), [.other(status: 2)])
        // A named problem next to an unnamed one: both are reported.
        let mixed = status(GNUTLS_CERT_INVALID, GNUTLS_CERT_EXPIRED, GNUTLS_CERT_SIGNATURE_FAILURE)
        XCTAssertEqual(CertificateProblem.problems(in: mixed), [.expired, .other(status: mixed)])
    }

    func testReasonsNameTheHost() {
        XCTAssertEqual(CertificateProblem.nameMismatch.reason(host: "live.example.com"), "certificate does not name live.example.com")
        XCTAssertEqual(CertificateProblem.notYetValid.reason(host: "h"), "certificate not yet valid")
    }
}

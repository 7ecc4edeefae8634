import XCTest
@testable import LivePush

/// No description, error or log text carries a full auth_key hash, private key or token.
final class AuthRedactionTests: XCTestCase {
    let privateKey = "TopSecretPrivateKey123"
    let t0: Int64 = 1_700_000_000

    private func dumped(_ value: some Any) -> String {
        var out = ""
        dump(value, to: &out)
        return out
    }

    func testSignerNeverShowsThePrivateKey() {
        let signer = AuthKeySigner(privateKey: privateKey, timestampMeaning: .issuedAt(validity: .seconds(60)))
        for text in ["\(signer)", String(reflecting: signer), dumped(signer), "\([signer])"] {
            XCTAssertFalse(text.contains(privateKey), text)
            XCTAssertFalse(text.contains("Secret"), text)
        }
    }

    func testSignedURLsAreRedactedEverywhere() throws {
        let signer = AuthKeySigner(privateKey: privateKey)
        let signed = try signer.sign("rtmp://h/live/s?x=1", expiresAt: t0)
        let url = try PushURL(signed)
        let hash = try XCTUnwrap(AuthKeySigner.authKey(of: url)).hash
        let key = try XCTUnwrap(AuthKeySigner.authKey(of: url))
        let watcher = AuthExpiryWatcher(url: url)
        let texts = [
            "\(url)", url.redacted, "\(key)", dumped(key), Redaction.redactURL(signed),
            Redaction.redactAuthKey(key.rawValue), dumped(watcher), "\(signer.verify(url, now: t0))",
            signer.verify(url, now: t0 + 10).explanation(now: t0 + 10),
        ]
        for text in texts {
            XCTAssertFalse(text.contains(hash), text)
            XCTAssertFalse(text.contains(hash.dropFirst(4)), text)
            XCTAssertFalse(text.contains(privateKey), text)
        }
    }

    func testErrorsDoNotCarrySecrets() throws {
        let hash = AuthKeySigner(privateKey: privateKey).hash(path: "/live/s", timestamp: t0)
        var errors: [LivePushError] = []
        do { _ = try AuthKey(parsing: "\(t0)-0-0-\(hash)X") } catch { errors.append(error) }
        do { _ = try AuthKey(parsing: "\(t0)-0-\(hash)") } catch { errors.append(error) }
        do { _ = try AuthKey(parsing: "\(hash)") } catch { errors.append(error) }
        do { _ = try AuthKeySigner(privateKey: privateKey).sign("rtmp://bad host/live/s?auth_key=\(t0)-0-0-\(hash)", expiresAt: t0) } catch { errors.append(error) }
        do { _ = try AuthKeySigner(privateKey: privateKey).verify("rtmp://h/live?auth_key=\(t0)-0-0-\(hash)", now: t0) } catch { errors.append(error) }
        do { _ = try AuthKeySigner(privateKey: privateKey).sign("rtmp://h/live/s", expiresAt: t0, rand: privateKey + "-") } catch { errors.append(error) }
        var watcher = AuthExpiryWatcher()
        do { try watcher.accept("rtmp://h?token=\(hash)") } catch { errors.append(error) }
        XCTAssertEqual(errors.count, 7)
        for verdict in [AuthVerification.malformed(reason: "x"), .hashMismatch, .expired(at: t0), .missing] {
            errors.append(try XCTUnwrap(verdict.error))
        }
        errors.append(try XCTUnwrap(AuthExpiryEvent.authExpired(at: t0).error))
        for error in errors {
            for text in ["\(error)", error.message, String(reflecting: error), dumped(error)] {
                XCTAssertFalse(text.contains(hash.dropFirst(4)), text)
                XCTAssertFalse(text.contains(privateKey), text)
            }
        }
    }

    func testTokensAreMasked() throws {
        let token = "1700000000-SuperSecretTokenValue"
        let url = try PushURL("rtmp://h/live/s?token=\(token)")
        let parsed = try XCTUnwrap(PushToken(url: url))
        XCTAssertEqual(parsed.value, token)
        for text in ["\(parsed)", dumped(parsed), "\(url)", dumped(AuthExpiryWatcher(url: url))] {
            XCTAssertFalse(text.contains("SuperSecret"), text)
        }
    }

    func testRedactAuthKeyShapes() {
        XCTAssertEqual(Redaction.redactAuthKey("1700000000-0-0-0123456789abcdef0123456789abcdef"), "1700000000-0-0-0123****")
        XCTAssertEqual(Redaction.redactAuthKey("secret-with-four-parts"), "secr****")
        XCTAssertEqual(Redaction.redactAuthKey("garbage"), "garb****")
        XCTAssertEqual(Redaction.redactAuthKey("abc"), "****")
    }
}

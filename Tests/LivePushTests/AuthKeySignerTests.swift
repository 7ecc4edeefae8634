import Foundation
import XCTest
@testable import LivePush

/// MD5 computed outside the code under test, by python3's hashlib and by `openssl dgst -md5`.
enum ExternalMD5 {
    /// hashlib.md5 of each string, one run of python3 for all of them.
    static func python(_ inputs: [String]) throws -> [String] {
        let script = "import hashlib, sys\nfor a in sys.argv[1:]: print(hashlib.md5(a.encode('utf-8')).hexdigest())"
        let output = try run("/usr/bin/env", ["python3", "-c", script] + inputs, stdin: nil)
        return output.split(separator: "\n").map(String.init)
    }

    static func python(_ input: String) throws -> String { try XCTUnwrap(python([input]).first) }

    /// `printf %s INPUT | openssl dgst -md5 -r` → the hex digest.
    static func openssl(_ input: String) throws -> String {
        let output = try run("/usr/bin/env", ["openssl", "dgst", "-md5", "-r"], stdin: Data(input.utf8))
        return String(output.split(separator: " ").first ?? "")
    }

    private static func run(_ executable: String, _ arguments: [String], stdin: Data?) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let data = out.fileHandleForReading.readDataToEndOfFile()  // small output; EOF when the child exits
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NSError(domain: "ExternalMD5", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "\(arguments.prefix(2)) failed"])
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

final class AuthKeySignerTests: XCTestCase {
    let key = "s3cr3t-Priv@teKey"
    let t0: Int64 = 1_700_000_000

    // MARK: Hash vectors checked against python3 and openssl

    func testHashMatchesPythonAndOpenSSL() throws {
        let signer = AuthKeySigner(privateKey: key)
        let input = "/live/stream-\(t0)-0-0-\(key)"
        let ours = signer.hash(path: "/live/stream", timestamp: t0)
        XCTAssertEqual(ours, try ExternalMD5.python(input))
        XCTAssertEqual(ours, try ExternalMD5.openssl(input))
        XCTAssertEqual(ours.count, 32)
    }

    func testKnownVectorFromTheReferenceFormula() throws {
        // md5("/AppName/StreamName-1444435200-0-0-aliyuncdnexp1234")
        let signer = AuthKeySigner(privateKey: "aliyuncdnexp1234")
        let hash = signer.hash(path: "/AppName/StreamName", timestamp: 1_444_435_200)
        XCTAssertEqual(hash, try ExternalMD5.openssl("/AppName/StreamName-1444435200-0-0-aliyuncdnexp1234"))
    }

    func testManyRandomInputsMatchPython() throws {
        var rng = SystemRandomNumberGenerator()
        var cases: [(key: String, path: String, ts: Int64, rand: String)] = []
        for i in 0..<40 {
            let keyLength = Int.random(in: 1...40, using: &rng)
            let key = String((0..<keyLength).map { _ in "abcXYZ019-_.~!é漢".randomElement(using: &rng)! })
            let path = "/app\(i)/stream\(Int.random(in: 0...9999, using: &rng))"
            let rand = i.isMultiple(of: 2) ? "0" : AuthKeySigner.randomRand()
            cases.append((key, path, Int64.random(in: 0...4_000_000_000, using: &rng), rand))
        }
        let expected = try ExternalMD5.python(cases.map { "\($0.path)-\($0.ts)-\($0.rand)-0-\($0.key)" })
        XCTAssertEqual(expected.count, cases.count)
        for (c, hash) in zip(cases, expected) {
            XCTAssertEqual(AuthKeySigner(privateKey: c.key).hash(path: c.path, timestamp: c.ts, rand: c.rand), hash)
        }
    }

    func testSignedURLIsExactlyTheReferenceFormat() throws {
        let signer = AuthKeySigner(privateKey: key)
        let signed = try signer.sign("rtmp://push.example.com/live/stream", expiresAt: t0)
        let hash = try ExternalMD5.python("/live/stream-\(t0)-0-0-\(key)")
        XCTAssertEqual(signed, "rtmp://push.example.com/live/stream?auth_key=\(t0)-0-0-\(hash)")
    }

    func testSignWithRandAndUIDAndNestedApp() throws {
        let signer = AuthKeySigner(privateKey: key)
        let rand = "477b3bbc253f467b8def6711128c7bec"
        let signed = try signer.sign("rtmps://h:8443/app/inst/s1", expiresAt: t0, rand: rand, uid: "42")
        let hash = try ExternalMD5.openssl("/app/inst/s1-\(t0)-\(rand)-42-\(key)")
        XCTAssertEqual(signed, "rtmps://h:8443/app/inst/s1?auth_key=\(t0)-\(rand)-42-\(hash)")
        XCTAssertEqual(signer.verify(try PushURL(signed), now: t0), .valid(expiresAt: t0))
    }

    // MARK: Query parameters

    func testSigningKeepsOtherParametersAndReplacesAnExistingAuthKey() throws {
        let signer = AuthKeySigner(privateKey: key)
        let hash = try ExternalMD5.python("/live/s-\(t0)-0-0-\(key)")
        let signed = try signer.sign("rtmp://h/live/s?vhost=a.example.com&auth_key=1-0-0-old&x=1&auth_key=dup", expiresAt: t0)
        XCTAssertEqual(signed, "rtmp://h/live/s?vhost=a.example.com&auth_key=\(t0)-0-0-\(hash)&x=1")
        let appended = try signer.sign("rtmp://h/live/s?vhost=a&flag", expiresAt: t0)
        XCTAssertEqual(appended, "rtmp://h/live/s?vhost=a&flag&auth_key=\(t0)-0-0-\(hash)")
        // Re-signing a signed URL only changes the auth_key.
        let resigned = try signer.sign(signed, expiresAt: t0 + 60)
        XCTAssertTrue(resigned.hasPrefix("rtmp://h/live/s?vhost=a.example.com&auth_key=\(t0 + 60)-0-0-"), resigned)
        XCTAssertTrue(resigned.hasSuffix("&x=1"), resigned)
        XCTAssertEqual(signer.verify(try PushURL(resigned), now: t0), .valid(expiresAt: t0 + 60))
    }

    func testQueryHelper() {
        XCTAssertEqual(PushURLQuery.setting("a", to: "9", inURL: "rtmp://h/l/s"), "rtmp://h/l/s?a=9")
        XCTAssertEqual(PushURLQuery.setting("a", to: "9", inURL: "rtmp://h/l/s?"), "rtmp://h/l/s?a=9")
        XCTAssertEqual(PushURLQuery.setting("a", to: "9", inURL: "rtmp://h/l/s?b=1&a=2#f"), "rtmp://h/l/s?b=1&a=9#f")
        XCTAssertEqual(PushURLQuery.values(of: "a", inQuery: "a=1&ab=2&a=3&A=4"), ["1", "3"])
        XCTAssertEqual(PushURLQuery.query(ofURL: "rtmp://h/l/s?x=1#frag"), "x=1")
    }

    // MARK: Timestamp readings

    func testExpiryReading() throws {
        let signer = AuthKeySigner(privateKey: key, timestampMeaning: .expiry)
        let url = try PushURL(try signer.sign("rtmp://h/live/s", expiresAt: t0 + 3600))
        XCTAssertEqual(AuthKeySigner.authKey(of: url)?.timestamp, t0 + 3600)
        XCTAssertEqual(AuthKeySigner.expiry(of: url, timestampMeaning: .expiry), t0 + 3600)
        XCTAssertEqual(signer.verify(url, now: t0), .valid(expiresAt: t0 + 3600))
        XCTAssertEqual(signer.verify(url, now: t0 + 3600), .valid(expiresAt: t0 + 3600))
        XCTAssertEqual(signer.verify(url, now: t0 + 3601), .expired(at: t0 + 3600))
    }

    func testIssuedAtReading() throws {
        let meaning = AuthTimestampMeaning.issuedAt(validity: .seconds(1800))
        let signer = AuthKeySigner(privateKey: key, timestampMeaning: meaning)
        let clock = ManualWallClock(now: t0)
        let url = try PushURL(try signer.sign("rtmp://h/live/s", validFor: .seconds(1800), clock: clock))
        XCTAssertEqual(AuthKeySigner.authKey(of: url)?.timestamp, t0, "TIMESTAMP is the signing time")
        XCTAssertEqual(AuthKeySigner.expiry(of: url, timestampMeaning: meaning), t0 + 1800)
        XCTAssertEqual(AuthKeySigner.expiry(of: url, timestampMeaning: .expiry), t0)
        XCTAssertEqual(signer.verify(url, now: t0 + 1800), .valid(expiresAt: t0 + 1800))
        XCTAssertEqual(signer.verify(url, now: t0 + 1801), .expired(at: t0 + 1800))
        // Read as an expiry time the same URL has already expired.
        XCTAssertEqual(AuthKeySigner(privateKey: key).verify(url, now: t0 + 1), .expired(at: t0))
        XCTAssertEqual(meaning.timestamp(forExpiry: t0 + 1800), t0)
        XCTAssertEqual(meaning.expiry(ofTimestamp: t0), t0 + 1800)
    }

    func testSignValidForUsesTheClock() throws {
        let clock = ManualWallClock(now: t0)
        let signer = AuthKeySigner(privateKey: key)
        let url = try PushURL(try signer.sign("rtmp://h/live/s", validFor: .seconds(600), clock: clock))
        XCTAssertEqual(AuthKeySigner.authKey(of: url)?.timestamp, t0 + 600)
        clock.advance(by: .seconds(601))
        XCTAssertEqual(signer.verify(url, now: clock.now), .expired(at: t0 + 600))
    }

    func testSkew() throws {
        let signer = AuthKeySigner(privateKey: key)
        let url = try PushURL(try signer.sign("rtmp://h/live/s", expiresAt: t0))
        XCTAssertEqual(signer.verify(url, now: t0 + 30, allowedSkew: .seconds(30)), .valid(expiresAt: t0))
        XCTAssertEqual(signer.verify(url, now: t0 + 31, allowedSkew: .seconds(30)), .expired(at: t0))
        XCTAssertEqual(signer.verify(url, now: t0 + 1, allowedSkew: .seconds(-5)), .expired(at: t0), "negative skew counts as 0")
    }

    // MARK: Forgeries and malformed keys

    func testForgedURLsAreHashMismatches() throws {
        let signer = AuthKeySigner(privateKey: key)
        let genuine = try signer.sign("rtmp://h/live/s?x=1", expiresAt: t0 + 3600)
        let value = try XCTUnwrap(PushURLQuery.values(of: "auth_key", inQuery: PushURLQuery.query(ofURL: genuine)).first)
        let hash = String(value.split(separator: "-")[3])

        // Signed with another key.
        let otherKey = try AuthKeySigner(privateKey: key + "x").sign("rtmp://h/live/s", expiresAt: t0 + 3600)
        XCTAssertEqual(try signer.verify(otherKey, now: t0), .hashMismatch)
        // The genuine auth_key on another stream or app.
        XCTAssertEqual(try signer.verify("rtmp://h/live/other?auth_key=\(value)", now: t0), .hashMismatch)
        XCTAssertEqual(try signer.verify("rtmp://h/app2/s?auth_key=\(value)", now: t0), .hashMismatch)
        // Extended expiry, changed rand or uid with the old hash.
        XCTAssertEqual(try signer.verify("rtmp://h/live/s?auth_key=\(t0 + 7200)-0-0-\(hash)", now: t0), .hashMismatch)
        XCTAssertEqual(try signer.verify("rtmp://h/live/s?auth_key=\(t0 + 3600)-1-0-\(hash)", now: t0), .hashMismatch)
        XCTAssertEqual(try signer.verify("rtmp://h/live/s?auth_key=\(t0 + 3600)-0-1-\(hash)", now: t0), .hashMismatch)
        // Another host and other parameters do not matter: only the path is signed.
        XCTAssertEqual(try signer.verify("rtmp://other:1936/live/s?auth_key=\(value)&y=2", now: t0), .valid(expiresAt: t0 + 3600))
        // A forged and expired URL is reported as forged.
        XCTAssertEqual(try signer.verify(otherKey, now: t0 + 9999), .hashMismatch)
    }

    func testMissingAndMalformed() throws {
        let signer = AuthKeySigner(privateKey: key)
        let hash = signer.hash(path: "/live/s", timestamp: t0)
        XCTAssertEqual(try signer.verify("rtmp://h/live/s", now: t0), .missing)
        XCTAssertEqual(try signer.verify("rtmp://h/live/s?token=abc", now: t0), .missing)
        let malformed = [
            "auth_key=", "auth_key=\(t0)-0-\(hash)", "auth_key=abc-0-0-\(hash)", "auth_key=\(t0)-0-0-\(hash.uppercased())",
            "auth_key=\(t0)-0-0-\(hash.prefix(31))", "auth_key=\(t0)--0-\(hash)", "auth_key=\(t0)-0-0-\(hash)-x",
            "auth_key=\(t0)-0-0-\(hash)&auth_key=\(t0)-0-0-\(hash)", "auth_key=99999999999999999999-0-0-\(hash)",
        ]
        for query in malformed {
            let result = try signer.verify("rtmp://h/live/s?\(query)", now: t0)
            guard case .malformed(let reason) = result else { XCTFail("\(query): \(result)"); continue }
            XCTAssertFalse(reason.contains(hash), reason)
            XCTAssertFalse(reason.contains(hash.prefix(31)), reason)
        }
    }

    func testBadInputsThrowInvalidURL() {
        let signer = AuthKeySigner(privateKey: key)
        for (rand, uid) in [("", "0"), ("a-b", "0"), ("0", "x&y"), ("0", "")] {
            XCTAssertThrowsError(try signer.sign("rtmp://h/live/s", expiresAt: t0, rand: rand, uid: uid)) { error in
                XCTAssertEqual((error as? LivePushError)?.code, .invalidURL)
            }
        }
        XCTAssertThrowsError(try signer.sign("rtmp://h/live", expiresAt: t0)) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .invalidURL)
        }
        XCTAssertThrowsError(try signer.verify("http://h/live/s", now: t0)) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .invalidURL)
        }
    }

    func testRandomRandIsAUUIDWithoutHyphens() {
        let a = AuthKeySigner.randomRand(), b = AuthKeySigner.randomRand()
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(a.count, 32)
        XCTAssertTrue(AuthKey.isLowercaseMD5(a))
        XCTAssertEqual(Array(a)[12], "4")
    }

    func testConstantTimeEquals() {
        XCTAssertTrue(AuthKeySigner.constantTimeEquals("abc", "abc"))
        XCTAssertFalse(AuthKeySigner.constantTimeEquals("abc", "abd"))
        XCTAssertFalse(AuthKeySigner.constantTimeEquals("abc", "abcd"))
        XCTAssertTrue(AuthKeySigner.constantTimeEquals("", ""))
    }

    func testExplanations() {
        XCTAssertEqual(AuthVerification.valid(expiresAt: t0 + 3599).explanation(now: t0),
                       "valid: expires 2023-11-14 23:13:19 UTC (in 3599 s)")
        XCTAssertEqual(AuthVerification.expired(at: t0).explanation(now: t0 + 120),
                       "invalid: expired 120 s ago (at 2023-11-14 22:13:20 UTC)")
        XCTAssertEqual(AuthVerification.hashMismatch.explanation(now: t0),
                       "invalid: hash mismatch (signature computed with a different key or path)")
        XCTAssertEqual(AuthVerification.missing.explanation(now: t0), "invalid: the URL has no auth_key parameter")
        XCTAssertEqual(AuthVerification.expired(at: t0).error?.code, .authExpired)
        XCTAssertEqual(AuthVerification.hashMismatch.error?.code, .publishRejected)
        XCTAssertNil(AuthVerification.valid(expiresAt: t0).error)
    }
}

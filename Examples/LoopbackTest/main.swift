// example-loopback-test: testing how your app handles a server that says no, without a server.
//
//     example-loopback-test FILE     e.g. example-loopback-test show.mp4
//
// `LivePushLoopback` is a local RTMP server that injects faults (see the README's loopback
// section and `FaultSpec` for every fault). Link it into your test targets only. Here each case
// starts a loopback with one fault, pushes FILE to it, and checks that the push fails with the
// `LivePushError.Code` the app would have to handle. Exits 0 when every case got its code.
import Foundation
import LivePush
import LivePushLoopback

guard CommandLine.arguments.count == 2 else {
    print("usage: example-loopback-test FILE")
    exit(2)
}
let file = CommandLine.arguments[1]

/// The fault, in `FaultSpec`'s text form, and the error code the push must end with.
let cases: [(fault: String, expected: LivePushError.Code)] = [
    ("reject-publish=badname", .publishRejected),  // `publish` answered NetStream.Publish.BadName
    ("reject-connect", .connectRejected),          // `connect` answered NetConnection.Connect.Rejected
]

/// Pushes `file` to a fresh loopback with `fault` and returns the code the push failed with
/// (nil: it did not fail).
func push(against fault: String) async throws -> LivePushError.Code? {
    let loopback = FaultLoopback(configuration: .init(faults: [try FaultSpec.parse(fault)]))
    let port = try loopback.start()  // port 0 was asked for: the system picked a free one
    defer { loopback.stop() }

    var config = PushConfig()
    config.responseTimeout = .seconds(2)  // each wait on the server: short, it is local
    let pusher = LivePusher(config: config)
    let events = pusher.events()
    try pusher.start(file: file, url: "rtmp://127.0.0.1:\(port)/live/test")

    // The code arrives in `connectFailed` (and `sdkError`), then the push stops by itself:
    // a refused first connect is not retried unless `retriesFirstConnect` is set.
    var code: LivePushError.Code?
    for await event in events {
        print("  \(event.name)\(event.error.map { ": \($0)" } ?? "")")
        if case .connectFailed(let error) = event { code = error.code }
    }
    return code
}

// A watchdog, so that a push that never ends cannot hang the test run.
Thread.detachNewThread {
    Thread.sleep(forTimeInterval: 60)
    print("FAIL: not finished within 60 s")
    exit(1)
}

var failures = 0
for (fault, expected) in cases {
    print("fault \(fault):")
    let code: LivePushError.Code?
    do {
        code = try await push(against: fault)
    } catch {
        print("FAIL: cannot push: \(error)")  // a bad fault spec, no free port, a missing FILE...
        failures += 1
        continue
    }
    if code == expected {
        print("ok: \(expected.name)")
    } else {
        print("FAIL: expected \(expected.name), got \(code.map(\.name) ?? "no error")")
        failures += 1
    }
}
exit(failures == 0 ? 0 : 1)

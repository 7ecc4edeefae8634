// example-pusher: the smallest complete push, with delegates.
//
//     example-pusher FILE URL        e.g. example-pusher show.mp4 rtmp://127.0.0.1/live/demo
//
// Pushes FILE to URL once, in real time, prints every callback it gets, and exits 0 when the
// push ended well (the whole file was sent) and 1 when it failed.
import Foundation  // exit()
import LivePush

/// One object receiving three of the callback groups. Every delegate method is optional:
/// implement the ones you care about. They are called on `PushConfig.callbackQueue`.
final class Printer: LivePusherInfoDelegate, LivePusherNetworkDelegate, LivePusherErrorDelegate {
    /// Signalled by the last callback of every push, `pusherDidStop`.
    let finished = DispatchSemaphore(value: 0)

    // Info: the push's life.
    func pusherDidStart(_ pusher: LivePusher) { print("connected and publishing") }
    func pusherDidPushFirstFrame(_ pusher: LivePusher) { print("first frame sent") }
    func pusher(_ pusher: LivePusher, didUpdate stats: PushStats) {
        print("stats: \(stats.videoFramesSent) video frames, \(stats.bytesSent) bytes, \(stats.bitrate) kbit/s")
    }
    func pusherDidStop(_ pusher: LivePusher, stats: PushStats) {
        print("stopped after \(stats.videoFramesSent) video and \(stats.audioFramesSent) audio frames")
        finished.signal()
    }

    // Network: connecting, losing the connection, reconnecting (LivePush retries by itself).
    func pusher(_ pusher: LivePusher, connectFailed error: LivePushError) { print("connect failed: \(error)") }
    func pusher(_ pusher: LivePusher, connectionLost error: LivePushError) { print("connection lost: \(error)") }
    func pusher(_ pusher: LivePusher, reconnectStarted attempt: Int) { print("reconnecting (attempt \(attempt))") }
    func pusherReconnectSucceeded(_ pusher: LivePusher) { print("reconnected") }

    // Errors: each carries a code (see the README's error table).
    func pusher(_ pusher: LivePusher, sdkError error: LivePushError) { print("SDK error: \(error)") }
    func pusher(_ pusher: LivePusher, systemError error: LivePushError) { print("system error: \(error)") }
}

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: example-pusher FILE URL")
    exit(2)
}

var config = PushConfig()
config.statsInterval = .seconds(1)  // a `didUpdate stats` callback every second
let pusher = LivePusher(config: config)
let printer = Printer()  // the pusher holds its delegates weakly: keep them alive yourself
pusher.infoDelegate = printer
pusher.networkDelegate = printer
pusher.errorDelegate = printer

do {
    // Throws at once for what can be checked here (a bad URL, a missing file, a codec that
    // cannot be pushed); what happens on the network arrives later, as callbacks.
    try pusher.start(file: arguments[1], url: arguments[2])
} catch {
    print("cannot start: \(error)")
    exit(1)
}

// Wait for the end of the push, but never forever: a real app would call `pusher.stop()`.
if printer.finished.wait(timeout: .now() + .seconds(600)) == .timedOut {
    print("the push did not end within 10 minutes")
    exit(1)
}
if case .failed(let error) = pusher.state {
    print("the push failed: \(error.code.name)")
    exit(1)
}
print("done")

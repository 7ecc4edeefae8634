/// Who runs the producer's steps (``PushEngine/step(_:)``).
///
/// An input that can block on its own (a pipe, standard input, frames or packets an app hands
/// in) and every `--fast` push get a thread of their own, which sleeps in the session's lock
/// between steps. A real-time push from files (and playout schedules of files) only waits for
/// its packets to fall due: it runs on the shared ``PacingScheduler``, so that hundreds of
/// channels cost a few threads rather than one each.
extension PushEngine {
    func startProducer(_ source: UncheckedTransfer<any MediaInput>) {
        if config.pacing == .realTime && source.value.readsWithoutWaiting && !(sequence?.inputsMayWait ?? false) {
            let job = ScheduledProducer(session: self, source: source.value)
            lock.withLock { scheduledProducer = job }
            PacingScheduler.shared.add(job)
        } else {
            lock.withLock { interruptSource = { source.value.interrupt() } }
            WorkerThread.start(name: "livepush.source") { self.runProducerThread(source.value) }
        }
    }

    private func runProducerThread(_ source: any MediaInput) {
        lock.withLock {
            while !startsProducing { lock.wait() }
        }
        guard var switcher = prepareProducer(source) else { return }
        while true {
            switch step(&switcher) {
            case .again:
                continue
            case .wait(let until):
                wakeSenders()
                let timeout = until.map { max(.zero, $0 - .microseconds(monotonicMicroseconds())).duration }
                lock.withLock {
                    if commands.isEmpty && !stopRequested { _ = lock.wait(timeout: timeout) }
                }
            case .waitForRoom(let output):
                // Bounded, so that a change of which outputs are connected is seen.
                output.waitForRoom(timeout: .milliseconds(100))
            case .finished:
                return
            }
        }
    }
}

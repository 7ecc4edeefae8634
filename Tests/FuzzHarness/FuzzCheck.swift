/// A fuzz target: a name, and the property every input must keep (``FuzzTarget``, ``AppFuzzTarget``).
protocol FuzzCheck {
    var rawValue: String { get }
    /// Runs the reader over `bytes`; the property it broke, or nil.
    func check(_ bytes: [UInt8]) -> String?
}

extension FuzzCheck {
    /// libFuzzer's entry: a broken property has to crash to be reported.
    func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        if let broken = check(Array(UnsafeBufferPointer(start: data, count: size))) {
            fatalError("\(rawValue): \(broken)")
        }
        return 0
    }
}

import Foundation

extension Data {
    /// Bytes from a hex string, as test vectors publish them. Traps on bad input: the hex is
    /// always a literal in a test.
    init(hex: String) {
        precondition(hex.count.isMultiple(of: 2), "hex literal of odd length")
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }
}

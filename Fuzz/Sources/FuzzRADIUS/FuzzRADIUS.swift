import CountersignRADIUS
import LibFuzzerDriver
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hands the command line to libFuzzer, which then calls `fuzzRADIUS` once per input.
@main enum FuzzRADIUS {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzRADIUS))
    }
}

/// One input, as a datagram or a RadSec record would bring it: a packet that reads must write
/// back as exactly the octets it was read from (up to its Length; the rest is padding), and
/// those octets must read as the same packet. A failure traps, which libFuzzer reports as a
/// crash and saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzRADIUS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard let packet = try? RADIUSPacket(parsing: input) else { return 0 }
    let encoded = packet.encoded()
    guard encoded.count <= size, encoded[...] == input[..<encoded.count] else {
        fatalError("a packet did not write back as the octets it was read from")
    }
    guard (try? RADIUSPacket(parsing: encoded)) == packet else { fatalError("a packet's own octets read differently") }
    return 0
}

import CountersignCBOR
import LibFuzzerDriver
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hands the command line to libFuzzer, which then calls `fuzzCBOR` once per input.
@main enum FuzzCBOR {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzCBOR))
    }
}

/// One input: decoded in both modes, every value that decodes must survive canonical
/// re-encoding unchanged, canonical input must be its own encoding, and an error must point
/// inside the input. A failure traps, which libFuzzer reports as a crash and saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzCBOR(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let lenient = CBORDecoder()
    let canonical = CBORDecoder(options: .canonical)
    do {
        let value = try lenient.decode(input)
        let encoded = CBOREncoder.encode(value)
        guard let again = try? canonical.decode(encoded), again == value else {
            fatalError("canonical re-encoding changed the value")
        }
    } catch {
        guard (0...size).contains(error.offset) else { fatalError("\(error) points outside the input") }
    }
    do {
        let value = try canonical.decode(input)
        guard CBOREncoder.encode(value).elementsEqual(input) else { fatalError("canonical input did not re-encode to itself") }
        guard (try? lenient.decode(input)) == value else { fatalError("the modes disagree on canonical input") }
    } catch {
        guard (0...size).contains(error.offset) else { fatalError("\(error) points outside the input") }
    }
    if let (value, length) = try? lenient.decodePrefix(input) {
        guard length <= size, (try? lenient.decode(input.prefix(length))) == value else {
            fatalError("a prefix decoded differently on its own")
        }
    }
    return 0
}

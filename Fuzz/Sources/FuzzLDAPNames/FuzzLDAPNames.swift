import CountersignLDAPNames
import LibFuzzerDriver
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hands the command line to libFuzzer, which then calls `fuzzLDAPNames` once per input.
@main enum FuzzLDAPNames {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzLDAPNames))
    }
}

/// One input, as a directory could send it in a DN, an `objectGUID` or an `entryUUID`, or as a
/// user could type it for a filter. A failure traps, which libFuzzer reports as a crash and saves
/// the input.
///
/// - A DN that reads writes back (`description`) as text that reads as the same DN.
/// - Any text escaped as a DN value reads back, as the value of a one-RDN DN, as that text; so
///   does it quoted in a filter value once its `\xx` escapes are undone, and the escaped filter
///   value holds none of `*()` or NUL.
/// - 16 octets are an objectGUID whose id gives the same octets back, and whose text reads as the
///   same id; any other text that reads as an entryUUID prints as its lowercase self.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzLDAPNames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: input, as: UTF8.self)

    if let dn = try? DistinguishedName(parsing: text) {
        guard (try? DistinguishedName(parsing: dn.description)) == dn else {
            fatalError("a DN did not read back from its own description")
        }
    }

    let escaped = DistinguishedName.escape(text)
    guard let single = try? DistinguishedName(parsing: "cn=\(escaped)"), single.rdns.count == 1,
          single.rdns[0].count == 1, single.leafValue == text else {
        fatalError("an escaped DN value did not read back as itself")
    }

    let filterValue = Array(LDAPFilter.escape(text).utf8)
    guard !filterValue.contains(where: { [UInt8(ascii: "*"), UInt8(ascii: "("), UInt8(ascii: ")"), 0].contains($0) }),
          unescapeFilterValue(filterValue) == Array(text.utf8) else {
        fatalError("an escaped filter value is not the value, or holds a metacharacter")
    }

    if size >= 16 {
        let octets = Array(input.prefix(16))
        guard let id = DirectoryObjectID(objectGUID: octets), id.objectGUID == octets,
              DirectoryObjectID(entryUUID: id.description) == id else {
            fatalError("an objectGUID did not convert back")
        }
    }
    if let id = DirectoryObjectID(entryUUID: text), id.description != text.lowercased() {
        fatalError("an entryUUID did not print as its lowercase text")
    }
    return 0
}

/// Undoes RFC 4515's `\xx` escapes; a backslash not followed by two hex digits is a failure.
private func unescapeFilterValue(_ bytes: [UInt8]) -> [UInt8]? {
    var result: [UInt8] = []
    var index = 0
    while index < bytes.count {
        if bytes[index] == UInt8(ascii: "\\") {
            guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else {
                return nil
            }
            result.append(high << 4 | low)
            index += 3
        } else {
            result.append(bytes[index])
            index += 1
        }
    }
    return result
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte - 0x30
    case 0x41...0x46: byte - 0x41 + 10
    case 0x61...0x66: byte - 0x61 + 10
    default: nil
    }
}

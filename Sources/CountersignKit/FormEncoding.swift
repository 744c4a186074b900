import Foundation

/// `application/x-www-form-urlencoded`, as the WHATWG URL standard serializes it: the body of a
/// token request, the query of an authorization request.
package enum FormEncoding {
    /// The form, keys sorted so that requests are reproducible.
    package static func encode(_ form: [String: String]) -> String {
        form.sorted { $0.key < $1.key }.map { encode($0.key) + "=" + encode($0.value) }.joined(separator: "&")
    }

    /// One name or value: letters, digits and `*-._` stay, a space becomes `+`, every other byte
    /// of the UTF-8 is percent-encoded.
    package static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                encoded += "+"
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }
}

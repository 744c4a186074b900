// String(validUTF8:) against the standard library's String(validating:as:), which it replaces
// where iOS 17 lacks the latter. Compiled together with the implementation it measures:
//
//     swiftc -O -wmo -package-name bench Sources/CountersignCBOR/ValidUTF8.swift Benchmarks/utf8-validation/main.swift -o /tmp/utf8-validation
//     /tmp/utf8-validation
import Foundation

@inline(never) func standardLibrary(_ bytes: [UInt8]) -> Int { String(validating: bytes, as: UTF8.self)?.utf8.count ?? 0 }
@inline(never) func countersign(_ bytes: [UInt8]) -> Int { String(validUTF8: bytes)?.utf8.count ?? 0 }

let inputs: [(String, [UInt8])] = [
    ("12 ASCII bytes", Array("alice@ex.com".utf8)),
    ("43 mixed bytes", Array("Pay 42.00 € to Zürich Café · 東京 ok".utf8)),
    ("1 KiB ASCII", Array(String(repeating: "abcdefgh", count: 128).utf8)),
    ("1 KiB, last byte ill-formed", Array(String(repeating: "abcdefgh", count: 128).utf8.dropLast()) + [0xFF]),
]
for (name, bytes) in inputs {
    for (label, validate) in [("String(validating:as:)", standardLibrary), ("String(validUTF8:)", countersign)] {
        let rounds = 2_000_000
        var total = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<rounds { total &+= validate(bytes) }
        let nanoseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds)
        print("\(name)\t\(label)\t\(String(format: "%.1f", nanoseconds)) ns\t(\(total))")
    }
}

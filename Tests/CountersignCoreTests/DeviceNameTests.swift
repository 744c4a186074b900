import CountersignCore
import Testing

/// Device names: what a person sees in the list of their devices.
@Suite struct DeviceNameTests {
    @Test func surroundingWhiteSpaceIsTrimmed() {
        #expect(DeviceName.validate("  Ada's phone \n") == "Ada's phone")
        #expect(DeviceName.validate("\u{A0}laptop\t") == "laptop")
    }

    @Test(arguments: ["Ada's phone", "Büro-Mac", "📱 Pixel 8", "a", "Work laptop (2024)"])
    func ordinaryNamesAreKept(_ name: String) {
        #expect(DeviceName.validate(name) == name)
    }

    @Test func sixtyFourCharactersAreAllowed() {
        let name = String(repeating: "x", count: DeviceName.maximumLength)
        #expect(DeviceName.maximumLength == 64)
        #expect(DeviceName.validate(name) == name)
        #expect(DeviceName.validate("  " + name + "  ") == name)
    }

    @Test func lengthIsCountedInCodePointsNotBytes() {
        let name = String(repeating: "é", count: DeviceName.maximumLength)  // 128 bytes of UTF-8
        #expect(DeviceName.validate(name) == name)
    }

    @Test(arguments: [
        "", "   ", "\n\t", "\u{A0}",
        String(repeating: "x", count: 65),
        String(repeating: "é", count: 65),
    ])
    func emptyOrOverLongNamesAreRefused(_ name: String) {
        #expect(DeviceName.validate(name) == nil)
    }

    @Test(arguments: ["a\u{0}b", "tab\there", "line\nbreak", "cr\rhere", "bell\u{07}", "\u{1B}[31mred", "del\u{7F}", "a\u{85}b", "a\u{9B}b"])
    func namesWithControlCharactersAreRefused(_ name: String) {
        #expect(DeviceName.validate(name) == nil)
    }

    @Test func lengthIsCountedInCodePointsNotUserPerceivedCharacters() {
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}"  // one character, five code points
        #expect(family.count == 1 && family.unicodeScalars.count == 5)
        #expect(DeviceName.validate(String(repeating: family, count: 12) + "abcd") != nil)  // 64 code points
        #expect(DeviceName.validate(String(repeating: family, count: 13)) == nil)  // 65 code points, 13 characters
    }
}

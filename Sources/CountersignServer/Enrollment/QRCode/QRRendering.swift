extension QRCode {
    /// An SVG document showing the symbol as black modules on a white background.
    ///
    /// The view box is in module units, so the drawing stays sharp at any scale; `width` and
    /// `height` give its natural pixel size. Dark modules form a single `<path>`, one
    /// rectangle per horizontal run, and `shape-rendering="crispEdges"` keeps renderers from
    /// anti-aliasing the seams between runs into faint grey lines.
    ///
    /// - Parameters:
    ///   - moduleSize: Pixels per module in the natural size; values below 1 count as 1.
    ///   - border: Quiet-zone width in modules; the standard asks for 4. Negative counts as 0.
    public func svg(moduleSize: Int = 8, border: Int = 4) -> String {
        let moduleSize = max(1, moduleSize)
        let border = max(0, border)
        let span = size + 2 * border
        let pixels = span * moduleSize

        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard self[x, y] else {
                    x += 1
                    continue
                }
                let start = x
                while x < size, self[x, y] {
                    x += 1
                }
                let run = x - start
                path += "M\(start + border),\(y + border)h\(run)v1h-\(run)z"
            }
        }

        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(span) \(span)" shape-rendering="crispEdges">
            <rect width="\(span)" height="\(span)" fill="#ffffff"/>
            <path fill="#000000" d="\(path)"/>
            </svg>

            """
    }

    /// The symbol drawn with Unicode half blocks, two module rows per line of text.
    ///
    /// Light modules, the quiet zone included, are printed as block characters and dark
    /// modules as spaces. On the usual dark-background terminal the blocks take the light
    /// foreground colour and the spaces show the dark background, so the result reads as a
    /// correctly coloured symbol without escape sequences for inverse video, which pipes,
    /// logs and some terminals would mangle. On a light-background terminal the symbol comes
    /// out inverted; many phone readers still cope, but the SVG or PNG is the safer choice.
    ///
    /// - Parameter border: Quiet-zone width in modules; negative counts as 0. The standard
    ///   asks for 4, but 2 is usually enough on screen and keeps the output narrow.
    /// - Returns: Lines of `size + 2 × border` characters, each ending in a newline.
    public func terminalText(border: Int = 2) -> String {
        let border = max(0, border)
        let range = -border..<(size + border)
        var text = ""
        for top in stride(from: range.lowerBound, to: range.upperBound, by: 2) {
            for x in range {
                let upperLight = !self[x, top]
                // With an odd number of rows the last line's lower half lies outside the
                // quiet zone and is left as terminal background.
                let lowerLight = range.contains(top + 1) && !self[x, top + 1]
                switch (upperLight, lowerLight) {
                case (true, true): text += "█"
                case (true, false): text += "▀"
                case (false, true): text += "▄"
                case (false, false): text += " "
                }
            }
            text += "\n"
        }
        return text
    }
}

@testable import TypingCore

extension IndicatorView {
    /// An own view listing `typing`, counting `more` beyond them, with the phrase
    /// `text`: a view built directly, to compare with the engine's or to encode.
    convenience init(typing: [Identifier], more: Int = 0, text: String) {
        var packed: [UInt8] = []
        var starts: [Int32] = []
        for id in typing {
            starts.append(Int32(packed.count))
            IndicatorView.pack(id, into: &packed)
        }
        let textStart = packed.count
        starts.append(Int32(textStart))
        packed.append(contentsOf: text.utf8)
        self.init(packed: packed, entryStarts: starts, listed: typing.count, more: more, textStart: textStart)
    }
}

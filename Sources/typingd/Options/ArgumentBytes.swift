import Glibc
import TypingProtocol

/// The command line as the bytes it was given. ArgumentParser reads
/// `CommandLine.arguments`, Strings in which every byte that is not part of valid
/// UTF-8 was replaced by U+FFFD: a path holding such a byte would name another file
/// (`--record` wrote `r\u{FFFD}.rec` for `r\xFF.rec`, and `--phrases`, `replay` and
/// `check` looked for a file that is not there, naming it with the replacement
/// character). Such an argument is refused before anything is parsed, named as it
/// is (escaped, as ``TextFormat/path(_:)`` writes paths).
enum ArgumentBytes {
    /// The first argument after the program's name whose bytes are not valid
    /// UTF-8: its place (from 1) and its bytes.
    static func firstInvalid() -> (position: Int, bytes: [UInt8])? {
        guard CommandLine.argc > 1 else { return nil }
        for position in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[position] else { continue }
            let bytes = UnsafeRawBufferPointer(start: argument, count: strlen(argument))
            if !isUTF8(bytes) { return (position, Array(bytes)) }
        }
        return nil
    }

    /// True when `bytes` are valid UTF-8.
    static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .error: return false
            case .emptyInput: return true
            }
        }
    }

    /// The message for an argument that is not UTF-8.
    static func message(position: Int, bytes: [UInt8]) -> String {
        "argument \(position), \(TextFormat.path(bytes)), is not UTF-8: typingd takes its options and the paths they name as UTF-8 text; rename the file"
    }
}

import TypingProtocol

/// The manual clock loop: read, process every complete line, write, repeat; at the
/// end of input, drain (unless `--no-drain`) and write the rest.
///
/// Output is written before every read, so nothing is held back while typingd
/// waits for input.
struct ManualLoop {
    /// The settings.
    let configuration: SessionConfiguration

    /// Runs until the end of input.
    func run() throws(IOFailure) {
        var session = Session(configuration: configuration)
        let input = InputReader(fd: 0)
        let output = OutputWriter(fd: 1)
        while true {
            try session.takeOutput { bytes throws(IOFailure) in try output.write(bytes) }
            let chunk = try input.read()
            if chunk.isEmpty { break }
            session.feed(chunk)
        }
        session.finish()
        try session.takeOutput { bytes throws(IOFailure) in try output.write(bytes) }
    }
}

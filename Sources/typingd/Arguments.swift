import ArgumentParser
import TypingCore
import TypingProtocol

extension ClockMode: ExpressibleByArgument {}
extension PhraseStyle: ExpressibleByArgument {}

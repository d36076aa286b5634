#!/usr/bin/env python3
"""Check typingd's golden transcripts against command.schema.json and event.schema.json
(protocol v4; transcripts of v1, v2 and v3 are v4 transcripts too).

    python3 schema/validate.py [PATH ...]     (default: ../examples/transcripts)

For every NAME.in.jsonl / NAME.out.jsonl pair under the PATHs (files or folders):
  - every output line must be a valid event;
  - an input line that got an error whose code says "not a command" (NOT_A_COMMAND)
    must be INVALID, every other non-blank input line VALID. A line is judged as
    typingd reads it: framing (--max-line-bytes from NAME.args), then decoding as
    jansson does, then the command schema (the real-clock variant under --clock real).
Two keywords of the schemas are this script's: maxUtf8Bytes (byte limits: conv, user,
by, thread, id, name, locale, status) and sameLength (typing and activities as long as each other).
Prints each disagreement on stderr (file:line, the line, the validator's message), then
"N lines checked, N disagreements" on stdout; exits 0 only with none (1 otherwise,
2 when jsonschema is missing or a PATH does not exist).
"""
import json
import os
import shlex
import sys
from decimal import Decimal

try:
    import jsonschema
    from jsonschema import Draft202012Validator, ValidationError
except ImportError:
    print("validate.py needs the Python package jsonschema (pip install jsonschema, "
          "or apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))

# Error codes (Protocol.md, Errors). A line refused with these is not a valid command:
NOT_A_COMMAND = {
    "line_too_long",   # framing: longer than --max-line-bytes
    "bad_json",        # jansson rejected the text
    "not_object",      # JSON, but not an object
    "missing_field",   # cmd, conv, user, or tick's at absent
    "bad_field",       # wrong type, size or range
    "unknown_cmd",     # cmd is a string but no command
    "clock_mode",      # at or tick under --clock real (judged by #/$defs/real_clock_command)
}
# ... and these refuse a valid command because of typingd's state at that moment:
VALID_COMMAND = {"not_member", "time_backwards", "limit"}


def max_utf8_bytes(validator, limit, instance, schema):
    """The keyword the schemas add for byte limits (maxLength counts code points)."""
    if validator.is_type(instance, "string"):
        size = len(instance.encode("utf-8", "surrogatepass"))
        if size > limit:
            yield ValidationError(f"{instance[:40]!r}... is {size} bytes of UTF-8, more than {limit}")


def same_length(validator, keys, instance, schema):
    """The keyword for lists that go together (an event's typing and activities): when
    the object has every one of them as an array, they are equally long."""
    if validator.is_type(instance, "object"):
        arrays = [instance[key] for key in keys if validator.is_type(instance.get(key), "array")]
        if len(arrays) == len(keys) and len({len(array) for array in arrays}) > 1:
            sizes = ", ".join(f"{key} has {len(instance[key])}" for key in keys)
            yield ValidationError(f"{' and '.join(keys)} must be equally long: {sizes}")


# version= registers it for the 2020-12 meta-schema, so a "$ref" into a resource that
# declares "$schema" (the real-clock entry point refers to the root) keeps the keywords.
Validator = jsonschema.validators.extend(Draft202012Validator,
                                         {"maxUtf8Bytes": max_utf8_bytes, "sameLength": same_length},
                                         version="draft2020-12 with maxUtf8Bytes and sameLength")


class NotJSON(ValueError):
    pass


def decode(text):
    """The value of a line as jansson reads it (Protocol.md, Framing), or NotJSON.
    Numbers with a fraction or exponent become Decimal: never a JSON Schema integer,
    as for jansson, where 1000.0 and 1e3 are reals."""
    if text.startswith("\ufeff"):
        raise NotJSON("starts with a byte order mark")
    depth = deepest = 0
    in_string = escaped = False
    for char in text:                       # jansson nests at most 2048 deep
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    if deepest > 2048:
        raise NotJSON(f"nested {deepest} deep, more than 2048")

    def reject(what):
        raise NotJSON(f"{what} is not JSON")

    def integer(digits):
        if len(digits.lstrip("-")) > 20 or not -2**63 <= int(digits) < 2**63:
            raise NotJSON(f"integer {digits[:30]} does not fit in 64 bits")
        return int(digits)

    def real(digits):
        if abs(float(digits)) == float("inf"):
            raise NotJSON(f"real {digits} overflows")
        return Decimal(digits)

    def unique(pairs):
        keys = [key for key, _ in pairs]
        if len(keys) != len(set(keys)):
            raise NotJSON("duplicate key")
        return dict(pairs)

    try:
        value = json.loads(text, parse_constant=reject, parse_int=integer, parse_float=real,
                           object_pairs_hook=unique)
    except NotJSON:
        raise
    except ValueError as error:
        raise NotJSON(str(error)) from None

    def strings(node):
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for key, child in node.items():
                yield key
                yield from strings(child)
        elif isinstance(node, list):
            for child in node:
                yield from strings(child)

    for string in strings(value):
        if "\x00" in string:
            raise NotJSON("the escape \\u0000")
        if any("\ud800" <= char <= "\udfff" for char in string):
            raise NotJSON("a lone surrogate")
    return value


def read_line(raw):
    """bytes -> value, or NotJSON (NUL bytes and invalid UTF-8 included)."""
    if b"\x00" in raw:
        raise NotJSON("a NUL byte")
    try:
        return decode(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise NotJSON(f"invalid UTF-8 ({error.reason} at byte {error.start})") from None


def problem(validator, value):
    """The validator's message for value, or None when valid."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "".join(f"[{part!r}]" for part in error.absolute_path) or "the line"
    message = error.message if len(error.message) <= 300 else error.message[:300] + "..."
    return f"{where}: {message}"


def options(in_path):
    """(real clock?, max line bytes) from NAME.args, as `typingd check` reads it."""
    args_path = in_path[: -len(".in.jsonl")] + ".args"
    words = []
    if os.path.exists(args_path):
        with open(args_path, encoding="utf-8") as file:
            words = shlex.split(file.read(), comments=True)
    values = dict(zip(words, words[1:]))    # option -> the word after it
    return values.get("--clock") == "real", int(values.get("--max-line-bytes", 1048576))


def transcripts(paths):
    for path in paths:
        if os.path.isfile(path):
            for suffix in (".in.jsonl", ".out.jsonl", ".args"):
                if path.endswith(suffix):
                    yield path[: -len(suffix)] + ".in.jsonl"
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            yield from (os.path.join(folder, name) for name in sorted(files) if name.endswith(".in.jsonl"))


def lines(path):
    with open(path, "rb") as file:
        data = file.read()
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()                          # the last LF ends a line, it starts none
    return parts


def main(argv):
    with open(os.path.join(HERE, "command.schema.json"), encoding="utf-8") as file:
        command_schema = json.load(file)
    with open(os.path.join(HERE, "event.schema.json"), encoding="utf-8") as file:
        event_schema = json.load(file)
    for schema in (command_schema, event_schema):
        Validator.check_schema(schema)
    manual_clock = Validator(command_schema)
    # the same schema entered at #/$defs/real_clock_command (its "$ref": "#" is the root)
    real_clock = manual_clock.evolve(schema=command_schema["$defs"]["real_clock_command"])
    events = Validator(event_schema)

    paths = argv or [os.path.join(os.path.dirname(HERE), "examples", "transcripts")]
    for path in paths:
        if not os.path.exists(path):
            print(f"validate.py: no such file or folder: {path}", file=sys.stderr)
            return 2
    checked = disagreements = 0

    def disagree(place, raw, message):
        nonlocal disagreements
        disagreements += 1
        shown = raw.decode("utf-8", "backslashreplace")
        shown = shown if len(shown) <= 160 else shown[:160] + f"... ({len(raw)} bytes)"
        print(f"{place}: {message}\n    {shown}", file=sys.stderr)

    for in_path in dict.fromkeys(transcripts(paths)):
        out_path = in_path[: -len(".in.jsonl")] + ".out.jsonl"
        if not os.path.exists(out_path):
            disagree(in_path, b"", f"no {os.path.basename(out_path)} beside it")
            continue
        is_real, max_bytes = options(in_path)
        commands = real_clock if is_real else manual_clock

        refused = {}                         # input line number -> error code
        for number, raw in enumerate(lines(out_path), 1):
            checked += 1
            try:
                event = read_line(raw)
            except NotJSON as error:
                disagree(f"{out_path}:{number}", raw, f"event invalid: not JSON: {error}")
                continue
            why = problem(events, event)
            if why:
                disagree(f"{out_path}:{number}", raw, f"event invalid: {why}")
            if isinstance(event, dict) and event.get("event") == "error":
                refused[event.get("line")] = event.get("code")

        for number, raw in enumerate(lines(in_path), 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]                # a BOM at the very start is skipped
            code = refused.get(number)
            text = raw[:-1] if raw.endswith(b"\r") else raw
            if code is None and not text.strip(b" \t"):
                continue                     # blank lines are ignored
            checked += 1
            if code is not None and code not in NOT_A_COMMAND | VALID_COMMAND:
                disagree(f"{in_path}:{number}", raw, f"typingd answered with unknown code {code!r}")
                continue
            if len(raw) > max_bytes:         # CR counted, LF not
                why = f"longer than --max-line-bytes {max_bytes}"
            else:
                try:
                    why = problem(commands, read_line(text))
                except NotJSON as error:
                    why = f"not JSON as jansson reads it: {error}"
            if code in NOT_A_COMMAND and why is None:
                disagree(f"{in_path}:{number}", raw, f"typingd refused it ({code}) but the schema says VALID")
            elif code not in NOT_A_COMMAND and why is not None:
                said = f"typingd accepted it ({code})" if code else "typingd accepted it"
                disagree(f"{in_path}:{number}", raw, f"{said} but the schema says INVALID: {why}")

    print(f"{checked} lines checked, {disagreements} disagreements")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.setrecursionlimit(10000)             # json nests up to 2048 levels
    sys.exit(main(sys.argv[1:]))

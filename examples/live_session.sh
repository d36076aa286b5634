#!/bin/sh
# A live chat session piped through typingd on the real clock, filtered with jq
# down to what one member, Cleo, sees under the message list.
#
#   swift build && examples/live_session.sh [path/to/typingd]
#
# Commands arrive over about two and a half seconds; typingd writes each indicator the
# moment it changes, and clears Ben's on its own when his 700 ms timeout passes.
set -eu
TYPINGD=${1:-${TYPINGD:-.build/debug/typingd}}

session() {
    echo '{"cmd":"join","conv":"team","user":"ana","name":"Ana"}'
    echo '{"cmd":"join","conv":"team","user":"ben","name":"Ben"}'
    echo '{"cmd":"join","conv":"team","user":"cleo","name":"Cleo"}'
    sleep 0.3
    echo '{"cmd":"type","conv":"team","user":"ana"}'   # Ana starts typing
    sleep 0.3
    echo '{"cmd":"type","conv":"team","user":"ben"}'   # so does Ben
    sleep 0.3
    echo '{"cmd":"send","conv":"team","user":"ana"}'   # Ana sends her message
    sleep 1.1                                          # Ben pauses: timed out
    echo '{"cmd":"type","conv":"team","user":"ana"}'   # Ana again...
    sleep 0.3
    echo '{"cmd":"type","conv":"team","user":"ana","empty":true}'  # ...deletes it all
}

session | "$TYPINGD" --timeout-ms 700 --no-drain \
    | jq --unbuffered -r '
        select(.event == "indicator" and .viewer == "cleo")
        | "\(.at) ms\tcleo sees: \(if .text == "" then "(nobody is typing)" else .text end)"'

#!/bin/sh
# fuzz.sh runs every fuzz target of the project, one at a time, each for
# the given time (a Go duration, e.g. 2m) or number of inputs (e.g. 3000x;
# default 3000x):
#
#   scripts/fuzz.sh 2m          # what `make fuzz` runs
#   scripts/fuzz.sh 3000x       # the short form `make test` runs
#   scripts/fuzz.sh 1m Markdown # only the targets whose name matches
#
# A crasher is written under the package's testdata/fuzz/<FuzzName>/, where
# `go test` then replays it as a regular test case. FUZZPARALLEL sets the
# workers per target (default: GOMAXPROCS). Each new interesting input is
# minimized for at most FUZZMINIMIZETIME (default 5s; go test's own default
# of 60s leaves a short run no time to fuzz).
set -u
time=${1:-3000x}
only=${2:-}
go=${GO:-go}

# package target
targets='
./internal/httpapi FuzzDecodeBody
./internal/httpapi FuzzValidateChatMessage
./internal/httpapi FuzzQueryString
./internal/chat FuzzUserKey
./internal/files FuzzVerifySignedURL
./internal/tunnel FuzzParseFrame
./internal/sdkbot FuzzBotAnswer
./internal/botarchive FuzzReadArchive
./internal/indexing/parse FuzzParseText
./internal/indexing/parse FuzzParseMarkdown
./internal/indexing/parse FuzzParseHTML
./internal/indexing/parse FuzzParseCSV
./internal/indexing/parse FuzzParseJSON
./internal/indexing/parse FuzzParseDOCX
./internal/indexing/pdf FuzzParsePDF
./internal/indexing/pdf FuzzRenderPDF
'

failed=''
echo "$targets" | while read -r pkg name; do
	[ -n "$pkg" ] || continue
	case "$name" in *"$only"*) ;; *) continue ;; esac
	echo "== $name ($pkg, $time)"
	if ! $go test -run '^$' -fuzz "^$name\$" -fuzztime "$time" -fuzzminimizetime "${FUZZMINIMIZETIME:-5s}" ${FUZZPARALLEL:+-parallel "$FUZZPARALLEL"} "$pkg"; then
		echo "FAILED: $name ($pkg)"
		exit 1
	fi
done || exit 1

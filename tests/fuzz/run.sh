#!/bin/sh
# run.sh: the bounded fuzz run of `make test` and the corpus merge of
# `make fuzz-merge`, for one libFuzzer target (tests/fuzz/fuzz_NAME.c).
#
#   run.sh fuzz  BINARY NAME WORKDIR
#       1. replays tests/fuzz/corpus/NAME and tests/fuzz/regress/NAME, whole
#          files, once each (the regression run);
#       2. fuzzes for $RIGD_FUZZ_SECONDS seconds (default 30) from that
#          corpus, with the target's -max_len and dictionary. New inputs go
#          to WORKDIR/new, crashes to WORKDIR/ (crash-*, leak-*, timeout-*);
#          the committed corpus is never written.
#       Exit status non-zero on any finding.
#   run.sh merge BINARY NAME WORKDIR
#       adds to tests/fuzz/corpus/NAME the inputs of WORKDIR/new that
#       increase coverage (libFuzzer -merge=1), then empties WORKDIR/new.
set -eu

mode=$1 bin=$2 name=$3 work=$4
src=$(cd "$(dirname "$0")" && pwd)
corpus=$src/corpus/$name
regress=$src/regress/$name
seconds=${RIGD_FUZZ_SECONDS:-30}

# Per target: the largest input worth mutating. A message or batch of a few
# KB reaches every decoder path and the small limits the targets set; glTF
# needs room for the sample files (6 KB) and their growth.
case $name in
msg)  max_len=4096 ;;
edit) max_len=2048 ;;
gltf) max_len=16384 ;;
bin)  max_len=4096 ;;
svg)  max_len=8192 ;;
skeleton_assets) max_len=8192 ;;
skeleton) max_len=16384 ;;
*) echo "run.sh: unknown target $name" >&2; exit 2 ;;
esac
dict=
[ -f "$src/$name.dict" ] && dict=-dict=$src/$name.dict

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$work/new"

case $mode in
fuzz)
	# Files one by one (not as corpus directories), so that no input is
	# cut to -max_len and each is run exactly as committed.
	set --
	for f in "$corpus"/* "$regress"/*; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
	echo "fuzz_$name: replaying $# committed inputs"
	if [ $# -gt 0 ]; then
		"$bin" -runs=1 "$@" >"$work/replay.log" 2>&1 || {
			grep -a -v '^Executed ' "$work/replay.log" | tail -n 60
			echo "fuzz_$name: a committed input fails (see above)" >&2
			exit 1
		}
	fi
	echo "fuzz_$name: fuzzing for ${seconds}s (-max_len=$max_len)"
	"$bin" -max_total_time="$seconds" -max_len="$max_len" $dict -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/" \
		"$work/new" "$corpus" "$regress" >"$work/fuzz.log" 2>&1 || {
		tail -n 80 "$work/fuzz.log"
		echo "fuzz_$name: finding saved in $work/ (reproduce: $bin $work/crash-...)" >&2
		exit 1
	}
	grep -E '^#[0-9]+ *DONE|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
		"$work/fuzz.log" || tail -n 5 "$work/fuzz.log"
	echo "fuzz_$name: new inputs kept in $work/new ($(ls "$work/new" | wc -l)); \`make fuzz-merge\` adds those that raise coverage"
	;;
merge)
	before=$(ls "$corpus" | wc -l)
	"$bin" -merge=1 -max_len="$max_len" -artifact_prefix="$work/" "$corpus" "$work/new" \
		>"$work/merge.log" 2>&1 || {
		tail -n 40 "$work/merge.log"
		exit 1
	}
	rm -f "$work/new"/*
	echo "fuzz_$name: corpus $before -> $(ls "$corpus" | wc -l) inputs"
	;;
*)
	echo "usage: run.sh fuzz|merge BINARY NAME WORKDIR" >&2
	exit 2
	;;
esac

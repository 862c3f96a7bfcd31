#!/bin/bash
# One ctest of the verbs guest run (verbs-guest.sh, fixture
# interop_verbs_guest): passes when every STEP named here passed in the
# guest (a line "STEP rc=0" in OUTDIR/results.txt), prints the log of each
# one that did not. A step missing from results.txt did not run: failure.
#
# usage: verbs-result.sh OUTDIR [--skip-file NAME] [--allow-skip] STEP...
#   --skip-file NAME  OUTDIR/NAME, when present, says why these steps were
#                     left out (exit 77), as OUTDIR/skip does for all
#   --allow-skip      a step that skipped in the guest (rc=77, its reason
#                     on its line) is not a failure; all of them skipped:
#                     exit 77. Without it rc=77 fails like any other rc.
# exit: 0 all passed, 1 one failed or is missing, 77 skipped (the reason
#       printed)
set -u
out=${1:?usage: verbs-result.sh OUTDIR [--skip-file NAME] [--allow-skip] STEP...}
shift
skips=(skip)
if [ "${1:-}" = --skip-file ]; then
	skips+=("${2:?--skip-file needs a name}")
	shift 2
fi
allow_skip=0 nskip=0
if [ "${1:-}" = --allow-skip ]; then
	allow_skip=1
	shift
fi
for f in "${skips[@]}"; do
	if [ -s "$out/$f" ]; then
		echo "SKIP: $(cat "$out/$f")"
		exit 77
	fi
done
[ -s "$out/results.txt" ] || {
	echo "FAIL: no $out/results.txt (the guest run failed: see interop_verbs_guest, $out/serial.log)"
	exit 1
}
fail=0
for s in "$@"; do
	line=$(grep -E "^$s rc=" "$out/results.txt" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL: $s did not run in the guest"
		fail=1
		continue
	fi
	echo "$line"
	case $line in
	"$s rc=0 "* | "$s rc=0") ;;
	"$s rc=77 "*)
		if [ $allow_skip = 1 ]; then
			nskip=$((nskip + 1))
			continue
		fi
		fail=1
		;;
	*)
		fail=1
		echo "---- $s.log (last 40 lines) ----"
		tail -n 40 "$out/$s.log" 2>/dev/null
		echo "----"
		;;
	esac
done
if [ $fail = 0 ] && [ $nskip = $# ]; then
	echo "SKIP: every step skipped in the guest (the reasons above)"
	exit 77
fi
[ $fail = 0 ] && echo PASS
exit $fail

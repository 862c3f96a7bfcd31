#!/usr/bin/env bash
# clang-format (check only) and clang-tidy over the tracked C sources.
#   scripts/lint.sh BUILD_DIR   (a configured build dir with compile_commands.json)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v '^tests/.*/generated/')
rc=0
if ! clang-format --dry-run --Werror "${files[@]}"; then
	echo "lint: clang-format: run 'clang-format -i' on the files above"
	rc=1
fi
mapfile -t srcs < <(git ls-files 'src/*.c')
if [ ${#srcs[@]} -gt 0 ]; then
	# -ffat-lto-objects (the LTO of a Release/RelWithDebInfo build with GCC,
	# CMakeLists.txt) is a GCC option clang does not know: not a finding.
	if ! printf '%s\n' "${srcs[@]}" | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet \
		--extra-arg=-Wno-ignored-optimization-argument 2>/dev/null; then
		echo "lint: clang-tidy found problems"
		rc=1
	fi
fi
[ $rc -eq 0 ] && echo "lint: clean (${#files[@]} files formatted, ${#srcs[@]} library sources tidy)"
exit $rc

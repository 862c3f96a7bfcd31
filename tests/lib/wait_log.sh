# shellcheck shell=sh
# Sourced by test scripts that start a process in the background and must
# wait for a line in its log before going on (tcpdump's "listening on").
#
#   wait_log NAME PID LOG PATTERN SECONDS
#     0 once LOG has a line matching PATTERN (grep's basic regex);
#     1 if process PID (called NAME in the message) exited without it;
#     2 if SECONDS passed with PID still running and no such line.
#   On 1 and 2, $wait_log_error says what happened, naming NAME, PID and
#   LOG. A LOG that does not exist yet means "not yet": the background
#   child may not have opened it when the first look is taken.
# shellcheck disable=SC2034 # wait_log_error: for the caller
wait_log() {
	wl_name=$1 wl_pid=$2 wl_log=$3 wl_pat=$4
	wl_n=$(($5 * 20))
	wait_log_error=
	while [ "$wl_n" -gt 0 ]; do
		grep -q -e "$wl_pat" "$wl_log" 2>/dev/null && return 0
		if ! kill -0 "$wl_pid" 2>/dev/null; then
			# it may have written the line just before it exited
			grep -q -e "$wl_pat" "$wl_log" 2>/dev/null && return 0
			wait_log_error="$wl_name (pid $wl_pid) exited without '$wl_pat' in $wl_log"
			return 1
		fi
		sleep 0.05
		wl_n=$((wl_n - 1))
	done
	grep -q -e "$wl_pat" "$wl_log" 2>/dev/null && return 0
	wait_log_error="$wl_name (pid $wl_pid) still running, no '$wl_pat' in $wl_log after $5 s"
	return 2
}

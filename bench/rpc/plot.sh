#!/bin/sh
# Plot the payload-size sweep of a bench/rpc/run.sh run: MB/s and p50 round
# trip against payload size, WRITE (Read chunk) and READ (Write chunk),
# RPC-over-RDMA against libtirpc over TCP, one PNG (gnuplot).
#   bench/rpc/plot.sh RESULTS.csv OUT.png
set -eu
[ $# -eq 2 ] || { echo "usage: plot.sh RESULTS.csv OUT.png" >&2; exit 2; }
csv=$1 png=$2
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not installed" >&2; exit 1; }
dat=$(mktemp /tmp/rpcrdma-plot.XXXXXX)
trap 'rm -f "$dat"' EXIT
# one gnuplot data block per (workload, transport): size MB/s p50
awk -F, '
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
$1 ~ /^sweep_/ && $c["ops"] + 0 > 0 {
	k = $c["workload"] "/" $c["transport"]
	d[k] = d[k] $c["size"] " " $c["mb_per_s"] " " $c["p50_us"] "\n"
}
END {
	split("write/rdma write/tcp read/rdma read/tcp", ks, " ")
	for (i = 1; i <= 4; i++) printf "# %s\n%s\n\n", ks[i], d[ks[i]] == "" ? "nan nan nan\n" : d[ks[i]]
}' "$csv" >"$dat"
gnuplot <<GP
set terminal pngcairo size 1200,900 noenhanced
set output '$png'
set multiplot layout 2,2 title 'rpcrdma-perf sweep: RPC-over-RDMA (softiwarp) vs ONC RPC over TCP (libtirpc), loopback'
set logscale x 2
set logscale y 10
set grid
set key top left
set xlabel 'payload bytes'
set xtics ("1K" 1024, "4K" 4096, "16K" 16384, "64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304)
set ylabel 'MB/s (10^6 B/s)'
set title 'WRITE (data by Read chunk)'
plot '$dat' index 0 using 1:2 with linespoints title 'rdma', '' index 1 using 1:2 with linespoints title 'tcp (libtirpc)'
set title 'READ (data by Write chunk)'
plot '$dat' index 2 using 1:2 with linespoints title 'rdma', '' index 3 using 1:2 with linespoints title 'tcp (libtirpc)'
set ylabel 'p50 round trip (us)'
set title 'WRITE latency'
plot '$dat' index 0 using 1:3 with linespoints title 'rdma', '' index 1 using 1:3 with linespoints title 'tcp (libtirpc)'
set title 'READ latency'
plot '$dat' index 2 using 1:3 with linespoints title 'rdma', '' index 3 using 1:3 with linespoints title 'tcp (libtirpc)'
unset multiplot
GP
echo "$png"

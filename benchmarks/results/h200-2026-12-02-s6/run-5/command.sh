# Run 5 (session 2026-12-02-s6): where does `persistent` (run 3's version) lose its time? The same
# kernel compiled five ways (MASKS_CU_DEFINES, experiment-only macros in compact.cu), each in its
# own process against `fused`: A as run 3; B tiles assigned statically (warp w takes tiles
# w, w + all warps, ...: no tickets, relies on the grid being co-resident, which it is sized to
# be); C the 32 queue counters 16 KB apart rather than 128 bytes; D a 64 ns back-off in the
# look-back's spin; E = B + D. R = 256 and 1024, V = 128256 and 151936, fp32 and bf16, every
# support.
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s16run5.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
run() {  # name, defines, queue stride
  s=$SECONDS; (cd /tmp && MASKS_CU_DEFINES="$2" MASKS_QUEUE_STRIDE=$3 PYTHONPATH=$P timeout 100 python3 -m masks compare --backends cupy:fused,cupy:persistent --num-reqs 256,1024 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 20 --time-limit-s 80 --no-progress --out-dir $S/$1 > $S/$1.txt 2>&1); echo "$1 [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1/*.png $S/$1/compare.csv
}
run A "" 32
run B "-DMASKS_STATIC_TILES" 32
run C "-DMASKS_QUEUE_STRIDE=4096" 4096
run D "-DMASKS_BACKOFF=64" 32
run E "-DMASKS_STATIC_TILES -DMASKS_BACKOFF=64" 32
tar -czf $OUT/s.tgz -C $OUT run-5
cat $S/env.txt
for v in A B C D E; do echo "== $v"; grep -E "^cupy:(fused|persistent) " $S/$v.txt | awk '{print $1,$2,$3,$4,$5,$10}' | paste - - | awk '{print $2,$3,$4,$5,$6,$12}' | tr '\n' ';'; echo; done

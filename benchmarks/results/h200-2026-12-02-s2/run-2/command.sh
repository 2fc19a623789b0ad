# Run 2 (session 2026-12-02-s2): how much of Triton `fused`'s time on bf16 rows that fit in W is
# pass 2 (count the ranges, rank them), by leaving it out (.ab/tskip: HEAD 2bad5fb with pass 2
# skipped for rows whose count fits in W; output not checked, label "!skip") against HEAD
# (.ab/tr), R = 256/512, V = 128256/151936, bf16, every support, two rounds interleaved by tree
# (explore_s12.py = s9's explore.py + h200-2026-12-02/explore.patch). Then Nsight Compute's
# spread of active cycles over the SMs for cupy and numba `fused` at R = 256, V = 128256, bf16,
# 2048 ids per row.
S=$OUT/run-2; mkdir -p $S; R=$PWD; cp .ab/s12run2.sh $S/command.sh
for t in tr tskip; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
for round in 1 2; do
 (cd .ab/tr && PYTHONPATH=/tmp/site:$PWD timeout 100 python3 $R/.ab/explore_s12.py $S/tr-$round.json 1 256,512 128256,151936 bf16 "fused=triton:fused" > $S/tr-$round.txt 2>&1; echo "tr-$round rc $?" >> $S/env.txt)
 (cd .ab/tskip && PYTHONPATH=/tmp/site:$PWD timeout 100 python3 $R/.ab/explore_s12.py $S/tskip-$round.json 1 256,512 128256,151936 bf16 "!skip=triton:fused" > $S/tskip-$round.txt 2>&1; echo "tskip-$round rc $?" >> $S/env.txt)
done
tar -czf $OUT/s.tgz -C $OUT run-2
NCU=$(command -v ncu); (cd .ab/tr && PYTHONPATH=/tmp/site:$PWD timeout 120 $NCU --clock-control none --profile-from-start off --kernel-name regex:fused --metrics sm__cycles_active.max,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_elapsed.max,smsp__inst_executed.sum,sm__warps_launched.sum python3 $R/benchmarks/profile_kernels.py --backends cupy:fused,numba:fused,triton:fused --num-reqs 256 --vocab 128256 --dtype bf16 --support 2048 > $S/ncu-spread.txt 2>&1; echo "ncu rc $?" >> $S/env.txt)
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/env.txt; for f in $S/tr-1.txt $S/tskip-1.txt $S/tr-2.txt $S/tskip-2.txt; do echo $f; tail -n 13 $f; done; grep -v "^==" $S/ncu-spread.txt | grep -i "fused\|sm__\|smsp__" | cut -c1-160

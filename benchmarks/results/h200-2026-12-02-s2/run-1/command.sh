# Run 1 (session 2026-12-02-s2): side by side on bf16/fp32 `fused` at R = 256/512/1024, every V
# and support, two rounds interleaved by tree: .ab/ta = HEAD 329fecd; .ab/tr = the working tree
# (Triton: pass 2 ranks runs of consecutive words per lane with one warp scan a step, and the
# lowest set bit by brev + bfind.shiftamt; Numba: `_rank_bytes` stores and reads the regrouped
# bytes through lane pointers computed once); .ab/t8 = tr with _FUSED_RANGE_SUBSTEPS = 8 (Triton
# bf16 only). Then the bit-helper test natively, and Nsight Compute on the fused kernels at
# R = 256, V = 128256, bf16, 2048 ids per row (ta: cupy, numba, triton; tr: numba, triton).
S=$OUT/run-1; mkdir -p $S; R=$PWD; cp .ab/s12run1.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
for t in ta tr t8; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
run() { (cd .ab/$1 && s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 150 python3 -m masks compare --backends $3 --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes $4 --budget-ms 20 --time-limit-s 130 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round triton,numba bf16,fp32; run tr tr-$round triton,numba bf16,fp32; run t8 t8-$round triton bf16; done
for round in 1 2; do PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tr-$round/compare.json > $S/ab-$round-tr.md; PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/tr-$round/compare.json $S/t8-$round/compare.json > $S/ab-$round-t8.md; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-1
(cd .ab/tr && PYTHONPATH=/tmp/site:$PWD timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_triton_backend.py -k "bit_helpers" > $S/pytest-tr.log 2>&1; echo "pytest rc $?" >> $S/env.txt)
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu $NCU" >> $S/env.txt
prof() { (cd .ab/$1 && PYTHONPATH=/tmp/site:$PWD timeout 120 $NCU --clock-control none --profile-from-start off --kernel-name regex:fused --section SpeedOfLight --section WarpStateStats --section InstructionStats --section LaunchStats --section Occupancy python3 $R/benchmarks/profile_kernels.py --backends $2 --num-reqs 256 --vocab 128256 --dtype bf16 --support 2048 > $S/ncu-$1.txt 2>&1; echo "ncu $1 rc $?" >> $S/env.txt); }
prof ta cupy:fused,numba:fused,triton:fused; prof tr numba:fused,triton:fused
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/times.txt $S/env.txt; tail -n 2 $S/pytest-tr.log; grep -h "mismatch\|rror" $S/t*.txt | head
for f in $S/ab-*.md; do echo $f; head -n 4 $f; grep -i "geomean\|geometric" $f; done
grep -h "Duration\|Executed Instructions  \|Registers Per\|Achieved Occupancy\|Memory Throughput\|^  [a-z_]*fused\|compact_fused\|Function" $S/ncu-*.txt | head -60

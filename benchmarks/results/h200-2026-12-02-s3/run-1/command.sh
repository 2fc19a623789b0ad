# Run 1 (session 2026-12-02-s3): Triton `fused` pass 2 with a per-thread PTX loop over each
# owned word's set bits (`_EMIT_PTX`) -- the GPU tests of the Triton backend (its conformance
# cases and tests/test_triton_backend.py, which checks the PTX loop against Python), then
# `triton` bf16 at R = 256/512/1024, every V and support, two rounds interleaved by tree:
# .ab/ta = HEAD c61de8b (before), .ab/tr = the working tree (after), .ab/tb = tr with the
# 16 KB band off for bf16 (`_FUSED_SMALL_BLOCK_ROWS_PER_SM[2] = (4.0, 4.0)`: 32 KB at every R).
S=$OUT/run-1; mkdir -p $S; R=$PWD; cp .ab/s13run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in ta tr tb; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
s=$SECONDS; PYTHONPATH=/tmp/site:$R timeout 230 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py -k triton > $S/pytest-tr.log 2>&1; echo "pytest rc $? $((SECONDS-s)) s" >> $S/times.txt
tail -n 3 $S/pytest-tr.log
run() { (cd .ab/$1 && s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 60 python3 -m masks compare --backends triton --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --time-limit-s 50 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tr tr-$round; run tb tb-$round; done
for round in 1 2; do for t in tr tb; do PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/$t-$round/compare.json > $S/ab-$round-$t.md; done; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/times.txt $S/env.txt; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done

# Run 2 (session 2026-12-02-s4): Triton `fused` 16-bit rows: pass 1 streams the row as one stripe
# per pass-2 range (RANGES = 8 runs of columns per step) and sums each range's kept count as it
# goes, so pass 2 ranks without first reading the mask again to count its ranges
# (`_count_ranges` gone). .ab/t1: a stripe's units consecutive in the tile (79 registers at
# 32 KB per step); .ab/t2: range k's units in warp k's lanes (96 registers); HEAD c215ef9 =
# .ab/ta. First tests/test_triton_backend.py and the conformance suite's Triton cases natively
# on t2, then `triton` bf16 at R = 256/512/1024, every V and support, two rounds interleaved.
S=$OUT/run-2; mkdir -p $S; R=$PWD; cp .ab/s14run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in ta t1 t2; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
s=$SECONDS; (cd .ab/t2 && cp -r $R/tests $R/pyproject.toml . && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py -k triton > $S/pytest-t2.log 2>&1; echo "pytest rc $? $((SECONDS-s)) s" >> $S/times.txt; rm -rf tests pyproject.toml)
tail -n 2 $S/pytest-t2.log
run() { (cd .ab/$1 && s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 60 python3 -m masks compare --backends triton --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --time-limit-s 50 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run t1 t1-$round; run t2 t2-$round; done
for round in 1 2; do for t in t1 t2; do PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/$t-$round/compare.json > $S/ab-$round-$t.md; done; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/times.txt $S/env.txt; for f in $S/ab-*.md; do echo $f; tail -n 1 $f; done

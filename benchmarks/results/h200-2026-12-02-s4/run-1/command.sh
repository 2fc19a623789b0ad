# Run 1 (session 2026-12-02-s4): the last in-row segments of a warp's range (fewer than a group)
# as one more group of loads in CUDA C (predicated) and Numba (past the range: its last segment
# again), .ab/tg = the working tree, against HEAD c215ef9 (.ab/ta). First the GPU tests of both
# backends natively on tg (their backend files, the conformance suite's cupy and numba cases,
# and the harness tests, whose CUDA-only UUID test had not run on a GPU), then `cupy` and
# `numba` at R = 1/4/16/256/512, V = 128256/151936, fp32 and bf16, every support, two rounds
# interleaved by tree.
S=$OUT/run-1; mkdir -p $S; R=$PWD; cp .ab/s14run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in ta tg; do (cd .ab/$t && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())" >> $S/env.txt); done
s=$SECONDS; (cd .ab/tg && cp -r $R/tests $R/pyproject.toml . && PYTHONPATH=/tmp/site:$PWD timeout 240 python3 -m pytest -q -rs -p no:cacheprovider tests/test_cupy_backend.py tests/test_numba_backend.py tests/test_compare.py tests/test_conformance.py -k "cupy or numba or compare" > $S/pytest-tg.log 2>&1; echo "pytest rc $? $((SECONDS-s)) s" >> $S/times.txt; rm -rf tests pyproject.toml)
tail -n 2 $S/pytest-tg.log
run() { (cd .ab/$1 && s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 100 python3 -m masks compare --backends cupy,numba --num-reqs 1,4,16,256,512 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 20 --time-limit-s 90 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tg tg-$round; done
for round in 1 2; do PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tg-$round/compare.json > $S/ab-$round.md; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/times.txt $S/env.txt; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done

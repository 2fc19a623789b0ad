# Thirty-seventh session (2026-12-07), one device call; s36a.sh cut to HEAD against S = 8. Run 1: an A/B of Triton `fused`'s pass 2 on
# 16-bit rows that fit in W. .ab/ta = HEAD 216f78f (a count pass over the mask, 8 words per lane,
# then rank steps of 4 words per lane: 6-12 round trips to L2 at V = 128256-262144). tb/tc/td =
# the working tree: the first step's words are counted and kept for ranking, later steps counted
# then re-read (S = words per lane per step: tb 4, tc 8, td 16). `masks compare --backends
# triton` at R = 256/512/1024, every V and support, bf16, two rounds, the second in reverse order.
# Run 2: tc's Triton tests natively (test_triton_backend, and the conformance suite and fuzz
# cases of triton). Run 3, if the call has run under 330 s: the full default grid on tc
# (`python -m masks compare`), summarized.
R=$PWD; P=/tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
S=$OUT/run-1; mkdir -p $S; cp .ab/s37.sh $S/command.sh
{ nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv; hostname
  for t in ta tc; do (cd .ab/$t && PYTHONPATH=$P:$PWD python3 -c "from masks.compare import code_fingerprint; print('$t code_sha256', code_fingerprint())"); done; } > $S/env.txt 2>&1
run() { (cd .ab/$1 && s=$SECONDS; PYTHONPATH=$P:$PWD timeout 70 python3 -m masks compare --backends triton --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --time-limit-s 60 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
run ta ta-1; run tc tc-1; run tc tc-2; run ta ta-2
for n in 1 2; do for t in tc; do (cd benchmarks && PYTHONPATH=$P:$R python3 ab_table.py $S/ta-$n/compare.json $S/$t-$n/compare.json > $S/ab-$n-$t.md 2>&1); done; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s1.tgz -C $OUT run-1
S2=$OUT/run-2; mkdir -p $S2; cp .ab/s37.sh $S2/command.sh; s=$SECONDS
(cd .ab/tc && cp -r $R/tests . && PYTHONPATH=$P:$PWD timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py tests/test_fuzz.py -k triton > $S2/pytest.log 2>&1; echo "pytest rc $? $((SECONDS-s)) s" >> $S2/env.txt; rm -rf tests)
tar -czf $OUT/s2.tgz -C $OUT run-2
S3=$OUT/run-3; if [ $SECONDS -lt 330 ]; then mkdir -p $S3; cp .ab/s37.sh $S3/command.sh; s=$SECONDS
(cd .ab/tc && PYTHONPATH=$P:$PWD timeout 150 python3 -m masks compare --out-dir $S3/final --time-limit-s 130 --budget-ms 20 --no-progress > $S3/final.txt 2> $S3/final.err; echo "compare rc $? $((SECONDS-s)) s" >> $S3/env.txt)
(cd benchmarks && PYTHONPATH=$P:$R/.ab/tc python3 summarize.py $S3/final/compare.json > $S3/summary.md 2>&1)
tar -czf $OUT/s3.tgz -C $OUT run-3; fi
cat $S3/summary.md; tail -n 3 $S3/final.err; cat $S3/env.txt; tail -n 3 $S2/pytest.log; cat $S2/env.txt
cat $S/times.txt $S/env.txt; for f in $S/ab-*.md; do echo $f; tail -n 4 $f; done
python3 - "$S" <<'PY'
import json, statistics, sys
from pathlib import Path
S = Path(sys.argv[1]); cells = {}
for run in sorted(S.glob("t?-?/compare.json")):
    tree = run.parent.name.split("-")[0]
    for r in json.load(open(run))["results"]:
        if r["status"].startswith("ok"):
            key = (r["num_reqs"], r["vocab_size"], r["support"])
            cells.setdefault(key, {}).setdefault(tree, []).append(r["pct_of_ceiling"])
print("R V support: median % of ceiling over rounds (ta tc)")
for key in sorted(cells):
    print(*key, *(f"{t}={statistics.median(v):.1f}" for t, v in sorted(cells[key].items())))
PY

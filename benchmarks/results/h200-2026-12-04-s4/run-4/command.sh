# Run 4 (session 2026-12-04-s4): run 3's host step (auto, now Numba first) read 0.44 ms at
# R = 512, V = 151936 with 50 ids against the previous session's 0.24 ms (auto then CuPy):
# benchmarks/host_step.py on that shape with --backend cupy, numba and auto, interleaved twice.
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s30run4.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
for round in 1 2; do for b in cupy numba auto; do
  s=$SECONDS; (cd benchmarks && PYTHONPATH=$P timeout 40 python3 host_step.py --backend $b --shapes 512x151936 --out $S/host_step-$b-$round.json > $S/host_step-$b-$round.txt 2>&1)
  echo "$b round $round rc $? $((SECONDS-s)) s" >> $S/env.txt; tar -czf $OUT/s.tgz -C $OUT run-4
done; done
cat $S/env.txt; for f in $S/host_step-*.txt; do echo "== $(basename $f)"; cat $f; done

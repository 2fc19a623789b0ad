# Run 5 (session 2026-12-02-s5): run 4's `sync` cases again with .ab/first_calls.py fixed (in
# run 4 its check synchronised while the debug mode was still on, so every first call there
# read as failing), on HEAD's package (.ab/ta) and on the working tree's.
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s15run5.sh $S/command.sh; cp .ab/first_calls.py $S/
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
for tree in head final; do
  if [ $tree = head ]; then T=/tmp/site:$R/.ab/ta; else T=$P; fi
  (cd /tmp && PYTHONPATH=$T python3 -c "from masks.compare import code_fingerprint; print('$tree code_sha256', code_fingerprint())") >> $S/env.txt
  echo "== $tree" >> $S/first_calls.txt
  (cd /tmp && for b in torch cupy triton numba auto; do PYTHONPATH=$T timeout 60 python3 -W ignore $S/first_calls.py sync $b >> $S/first_calls.txt 2>&1; done)
done
tar -czf $OUT/s.tgz -C $OUT run-5; cat $S/first_calls.txt $S/env.txt
